package io.rdmablock.node.qos;

import io.rdmablock.node.metrics.ForegroundLatency;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The background budget's adaptation (docs/qos.md, "Background budget") on a simulated clock with a fake foreground
 * latency signal: the test feeds {@link ForegroundLatency} the commands of each window itself.
 */
class BackgroundBudgetTest {
    private static final long MIB = 1 << 20;
    private static final long FLOOR = 4 * MIB;
    private static final long CEILING = 40 * MIB;
    private static final long US = 1_000;

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final ForegroundLatency foreground = new ForegroundLatency();

    private BackgroundBudget budget(long floor, long ceiling) {
        return new BackgroundBudget(floor, ceiling, 50, foreground, clock::get);
    }

    /**
     * One window: background work asking for a region at its start when {@code background}, {@code commands}
     * foreground commands of {@code latencyNs} each; then the clock moves one window on. Returns the rate judged then, bytes/s.
     */
    private long window(BackgroundBudget b, int commands, long latencyNs, boolean background) {
        if (background) { // asks at the start of the window, the foreground's commands complete during it
            long ticket = b.ticket();
            if (b.tryTake(ticket, 64 << 10, clock.get()) != 0) {
                b.abandon(ticket);
            }
        }
        for (int i = 0; i < commands; i++) {
            foreground.record(latencyNs);
        }
        clock.addAndGet(BackgroundBudget.WINDOW_NS);
        return b.rateBytesPerSecond(clock.get());
    }

    @Test
    void theRateHalvesWhileForegroundLatencyIsAboveItsBaselineAndRecoversOnceItIsBack() {
        BackgroundBudget b = budget(FLOOR, CEILING);
        for (int i = 0; i < 3; i++) {
            assertEquals(CEILING, window(b, 100, 100 * US, false), "no background: the baseline is learned");
        }
        assertEquals(100 * US, b.baselineNs(), "baseline: the idle latency");
        assertEquals(CEILING, window(b, 100, 120 * US, true), "within the 50% slack: full speed");
        long previous = CEILING;
        for (int i = 0; i < 3; i++) { // 400 us, 4x the baseline: halves each window
            long rate = window(b, 100, 400 * US, true);
            assertEquals(Math.max(FLOOR, previous / 2), rate, "window " + i + " of high latency");
            previous = rate;
        }
        for (int i = 0; i < 10; i++) {
            assertEquals(FLOOR, window(b, 100, 400 * US, true), "never below the floor");
        }
        assertTrue(b.signalNs() > 300 * US, "signal: " + b.signalNs());
        // latency back to the baseline: the smoothed signal falls within a few windows, then +5% of the ceiling each
        long rate = FLOOR;
        int windows = 0;
        for (; windows < 100 && rate < CEILING; windows++) {
            long next = window(b, 100, 100 * US, true);
            assertTrue(next >= rate && next <= CEILING, "recovering: " + rate + " -> " + next);
            rate = next;
        }
        assertEquals(CEILING, rate, "back at the ceiling");
        assertTrue(windows <= 25, "floor to ceiling within ~1 s of windows: " + windows);
    }

    @Test
    void theBaselineIsLearnedOnlyOnceBackgroundWorkWasQuietForASecond() {
        BackgroundBudget b = budget(FLOOR, CEILING);
        window(b, 100, 100 * US, false);
        assertEquals(100 * US, b.baselineNs());
        window(b, 100, 100 * US, true);
        int quietWindows = (int) (BackgroundBudget.QUIET_MS / BackgroundBudget.WINDOW_MS);
        for (int i = 2; i < quietWindows; i++) { // background asked at the start of the window before: < 1 s ago
            window(b, 100, 300 * US, false);
            assertTrue(b.baselineNs() < 110 * US, "window " + i + ": baseline " + b.baselineNs());
        }
        assertEquals(FLOOR, b.rateBytesPerSecond(clock.get()), "3x the baseline all along: the floor");
        window(b, 100, 300 * US, false);
        assertEquals(b.signalNs(), b.baselineNs(), "quiet for a second: the latency now is the baseline");
        assertTrue(b.baselineNs() >= 299 * US, "baseline " + b.baselineNs());
        assertTrue(window(b, 100, 300 * US, true) > FLOOR, "and background work climbs again");
    }

    @Test
    void theTickerJudgesWindowsWithoutTakers() throws InterruptedException {
        try (BackgroundBudget b = new BackgroundBudget(FLOOR, CEILING, 50, foreground, System::nanoTime)) {
            b.startTicker();
            assertThrows(IllegalStateException.class, b::startTicker);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (b.baselineNs() == 0 && System.nanoTime() < deadline) {
                for (int i = 0; i < 20; i++) {
                    foreground.record(100 * US);
                }
                Thread.sleep(20);
            }
            assertEquals(100 * US, b.baselineNs(), "learned by the ticker alone");
        }
    }

    @Test
    void anIdleForegroundGivesTheCeilingAtOnce() {
        BackgroundBudget b = budget(FLOOR, CEILING);
        window(b, 100, 100 * US, false);
        for (int i = 0; i < 10; i++) {
            window(b, 100, 1_000 * US, true);
        }
        assertEquals(FLOOR, b.rateBytesPerSecond(clock.get()), "slow foreground: the floor");
        assertEquals(CEILING, window(b, 0, 0, true), "no foreground command in a window: full speed at once");
    }

    @Test
    void aWindowWithFewCommandsGrowsUntilItCanBeJudged() {
        BackgroundBudget b = budget(FLOOR, CEILING);
        window(b, 100, 100 * US, false);
        int windows = 0;
        long rate = CEILING;
        for (; windows < 20 && rate == CEILING; windows++) {
            rate = window(b, 2, 1_000 * US, true); // 2 slow commands a window: below MIN_SAMPLES
        }
        assertEquals(CEILING / 2, rate, "judged at last");
        // judged once MIN_SAMPLES (16) commands are in (8 windows) or at MAX_WINDOW_MS (10 windows)
        assertEquals(BackgroundBudget.MIN_SAMPLES / 2, windows, "windows before the judgement");
    }

    @Test
    void theRateStaysBetweenTheFloorAndTheCeilingWhateverTheSignal() {
        BackgroundBudget b = budget(FLOOR, CEILING);
        Random random = new Random(37);
        long least = Long.MAX_VALUE;
        long most = 0;
        for (int i = 0; i < 2_000; i++) {
            long rate = window(b, random.nextInt(200), (1 + random.nextInt(5_000)) * US, random.nextBoolean());
            assertTrue(rate >= FLOOR && rate <= CEILING, "window " + i + ": rate " + rate);
            least = Math.min(least, rate);
            most = Math.max(most, rate);
        }
        assertEquals(FLOOR, least, "the floor was reached");
        assertEquals(CEILING, most, "the ceiling was reached");
    }

    @Test
    void twoTakersShareTheBudgetInTurns() {
        BackgroundBudget b = budget(MIB, MIB); // fixed 1 MiB/s
        long chunk = 64 << 10;
        long[] taken = new long[2];
        long[] nextTry = {clock.get(), clock.get()};
        long[] ticket = {-1, -1};
        long end = clock.get() + 10_000_000_000L;
        for (int i = 0; i < 1_000_000; i++) {
            int t = nextTry[0] <= nextTry[1] ? 0 : 1; // ties go to taker 0: only the line keeps it fair
            if (nextTry[t] >= end) {
                break;
            }
            clock.set(nextTry[t]);
            if (ticket[t] < 0) {
                ticket[t] = b.ticket();
            }
            long wait = b.tryTake(ticket[t], chunk, clock.get());
            if (wait == 0) {
                taken[t] += chunk;
                ticket[t] = -1;
                nextTry[t] += 1_000_000L; // copies its region for 1 ms, then asks again
            } else {
                nextTry[t] += wait;
            }
        }
        long total = taken[0] + taken[1];
        // 10 s at 1 MiB/s, plus the 256 KiB bucket and one region of debt
        assertTrue(total >= 10 * MIB - chunk && total <= 10 * MIB + (256 << 10) + 2 * chunk, "total " + total);
        assertTrue(Math.abs(taken[0] - taken[1]) <= chunk, "in turns: " + taken[0] + " vs " + taken[1]);
        assertEquals(total, b.grantedBytes(), "granted counts every take");
    }

    @Test
    void aTakerThatGivesUpLeavesTheLineAndAStoppedWaitEndsAtOnce() {
        BackgroundBudget b = budget(MIB, MIB);
        long first = b.ticket();
        long second = b.ticket();
        assertTrue(b.tryTake(second, 1, clock.get()) > 0, "not its turn while the first waits in line");
        b.abandon(first);
        assertEquals(0, b.tryTake(second, 1, clock.get()), "its turn once the first gave up");

        BackgroundBudget real = new BackgroundBudget(MIB, MIB, 50, foreground, System::nanoTime);
        assertTrue(real.acquire(64 * MIB, () -> false), "the first take goes into debt");
        long t0 = System.nanoTime();
        assertFalse(real.acquire(64 << 10, () -> System.nanoTime() - t0 > 50_000_000L), "stopped while waiting");
        assertTrue(System.nanoTime() - t0 < 10_000_000_000L, "stopped at once, not after the 64 s of debt");
        assertEquals(64 * MIB, real.grantedBytes(), "a stopped wait took nothing");
    }

    @Test
    void badLimitsAreRefusedNamingTheField() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> budget(0, CEILING));
        assertTrue(e.getMessage().contains("floorBytesPerSecond=0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> budget(CEILING, FLOOR));
        assertTrue(e.getMessage().contains("ceilingBytesPerSecond=" + FLOOR), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new BackgroundBudget(FLOOR, CEILING, 0, foreground, clock::get));
        assertTrue(e.getMessage().contains("latencySlackPct: value=0, min=1, max=10000"), e.getMessage());
    }

    /** Greedy takers of 64 KiB regions over {@code ms} of the simulated clock (1 ms steps); bytes granted. */
    private long takeFor(BackgroundBudget b, long ms) {
        long before = b.grantedBytes();
        for (long t = 0; t < ms; t++) { // bounded: ms steps, at most 64 regions per step
            for (int i = 0; i < 64; i++) {
                long ticket = b.ticket();
                if (b.tryTake(ticket, 64 << 10, clock.get()) != 0) {
                    b.abandon(ticket);
                    break;
                }
            }
            clock.addAndGet(1_000_000L);
        }
        return b.grantedBytes() - before;
    }

    @Test
    void newBoundsTakeEffectAtOnceAndTheRateStaysBetweenThem() {
        BackgroundBudget b = budget(FLOOR, CEILING);
        long fast = takeFor(b, 1_000); // idle foreground: the ceiling
        assertTrue(fast >= 39 * MIB && fast <= 45 * MIB, "40 MiB/s + the 4 MiB bucket: " + fast);
        assertTrue(b.setBounds(MIB, MIB), "changed");
        assertEquals(MIB, b.rateBytesPerSecond(clock.get()), "the rate is clamped at once");
        assertEquals(MIB, b.ceilingBytesPerSecond());
        assertEquals(MIB, b.floorBytesPerSecond());
        long slow = takeFor(b, 1_000);
        // the second after: 1 MiB/s, plus what was in the bucket (capped to 256 KiB) and one region of debt
        assertTrue(slow >= MIB - (64 << 10) && slow <= MIB + (320 << 10), "1 MiB/s from the change on: " + slow);
        for (int i = 0; i < 20; i++) {
            assertEquals(MIB, window(b, 0, 0, true), "idle foreground: the new ceiling");
        }
        assertFalse(b.setBounds(MIB, MIB), "the same bounds: no change");
        assertTrue(b.setBounds(80 * MIB, 20 * MIB));
        assertEquals(20 * MIB, b.rateBytesPerSecond(clock.get()), "raised to the new floor at once");
        assertEquals(80 * MIB, window(b, 0, 0, true), "idle: the new ceiling at the next window");
        var bad = assertThrows(IllegalArgumentException.class, () -> b.setBounds(MIB, 2 * MIB));
        assertTrue(bad.getMessage().contains("floor"), bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.setBounds(MIB, 0));
        assertEquals(80 * MIB, b.ceilingBytesPerSecond(), "refused bounds change nothing");
    }
}
