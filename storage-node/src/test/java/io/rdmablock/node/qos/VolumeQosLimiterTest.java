package io.rdmablock.node.qos;

import io.rdmablock.mgmt.client.VolumeQos;
import io.rdmablock.rdma.fabric.Opcodes;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link VolumeQosLimiter} over simulated time (no sleeping, no timed assertions): the clock advances in poll-round
 * steps and a greedy client takes all it is given.
 */
class VolumeQosLimiterTest {
    private static final long SEC = 1_000_000_000L;
    /** A poll round every 50 us. */
    private static final long STEP = 50_000L;
    private static final long T0 = 1_000 * SEC;

    /** Admitted READs of {@code bytes} from {@code fromNs} for {@code durationNs}, asking as much as possible. */
    private static long greedy(VolumeQosLimiter l, int opcode, long bytes, long fromNs, long durationNs) {
        long n = 0;
        for (long t = fromNs; t < fromNs + durationNs; t += STEP) {
            int guard = 0;
            while (l.tryAcquire(opcode, bytes, t)) {
                n++;
                if (++guard > 1_000_000) {
                    throw new AssertionError("no limit at t=" + t);
                }
            }
        }
        return n;
    }

    @Test
    void fiveThousandIopsAdmitsFiveThousandPerSecondOverTenSeconds() {
        VolumeQosLimiter l = new VolumeQosLimiter();
        l.apply(VolumeQos.ofIops(5_000), 1L << 30, T0);
        long n = greedy(l, Opcodes.IO_READ, 4096, T0, 10 * SEC);
        assertTrue(n >= 47_500 && n <= 52_500, "admitted " + n + " in 10 s, want 47,500..52,500");
        // the same holds for a client that starts after a long idle (default burst 1: no saved credit)
        long later = greedy(l, Opcodes.IO_WRITE, 4096, T0 + 60 * SEC, 10 * SEC);
        assertTrue(later >= 47_500 && later <= 52_500, "admitted " + later + " after idle, want 47,500..52,500");
        long first = greedy(l, Opcodes.IO_WRITE, 4096, T0 + 100 * SEC, SEC);
        assertTrue(first <= 5_300, "first second after idle: " + first + ", want <= 5,300 (burst 1: 50 ms saved)");
    }

    @Test
    void fourQueuesShareOneBudget() {
        VolumeQosLimiter l = new VolumeQosLimiter();
        l.apply(VolumeQos.ofIops(5_000), 1L << 30, T0);
        long[] perQueue = new long[4];
        for (long t = T0; t < T0 + 10 * SEC; t += STEP) {
            for (int q = 0; q < 4; q++) { // each queue at QD32: at most 32 per round
                for (int i = 0; i < 32 && l.tryAcquire(Opcodes.IO_READ, 4096, t + q); i++) {
                    perQueue[q]++;
                }
            }
        }
        long total = perQueue[0] + perQueue[1] + perQueue[2] + perQueue[3];
        assertTrue(total >= 47_500 && total <= 52_500, "4 queues admitted " + total + " in 10 s");
    }

    @Test
    void hundredMibPerSecondWithOneMibWrites() {
        VolumeQosLimiter l = new VolumeQosLimiter();
        l.apply(new VolumeQos(0, 0, 0, 100L << 20, 0, 0, 0), 1L << 30, T0);
        long n = greedy(l, Opcodes.IO_WRITE, 1L << 20, T0, 10 * SEC);
        assertTrue(n >= 950 && n <= 1_050, "admitted " + n + " 1 MiB writes in 10 s, want 950..1,050");
    }

    @Test
    void burstOfTwoSecondsLetsTwiceTheLimitThroughForAboutOneSecondThenSettles() {
        VolumeQosLimiter l = new VolumeQosLimiter();
        l.apply(new VolumeQos(5_000, 0, 0, 0, 0, 0, 2), 1L << 30, T0);
        long idleUntil = T0 + 5 * SEC; // the bucket is full (it starts full; idle keeps it so)
        long first = greedy(l, Opcodes.IO_READ, 4096, idleUntil, SEC);
        assertTrue(first >= 9_500 && first <= 10_500, "first second: " + first + ", want ~2 x 5,000");
        long next = greedy(l, Opcodes.IO_READ, 4096, idleUntil + SEC, 4 * SEC);
        assertTrue(next >= 19_000 && next <= 21_000, "next 4 s: " + next + ", want ~4 x 5,000");
    }

    @Test
    void liveChangeTakesEffectAtOnce() {
        VolumeQosLimiter l = new VolumeQosLimiter();
        l.apply(VolumeQos.ofIops(5_000), 1L << 30, T0);
        long before = greedy(l, Opcodes.IO_READ, 4096, T0, 5 * SEC);
        assertTrue(before >= 23_750 && before <= 26_250, "5 s at 5,000: " + before);
        l.apply(VolumeQos.ofIops(20_000), 1L << 30, T0 + 5 * SEC);
        long tenth = greedy(l, Opcodes.IO_READ, 4096, T0 + 5 * SEC, SEC / 10);
        assertTrue(tenth >= 1_800 && tenth <= 2_300, "first 100 ms at 20,000: " + tenth);
        long after = greedy(l, Opcodes.IO_READ, 4096, T0 + 5 * SEC + SEC / 10, SEC);
        assertTrue(after >= 19_000 && after <= 21_000, "next second at 20,000: " + after);
        l.apply(VolumeQos.ofIops(1_000), 1L << 30, T0 + 7 * SEC); // and down again: the saved tokens are capped
        long down = greedy(l, Opcodes.IO_READ, 4096, T0 + 7 * SEC, SEC);
        assertTrue(down >= 950 && down <= 1_100, "a second at 1,000: " + down);
    }

    @Test
    void readAndWriteLimitsAreSeparate() {
        VolumeQosLimiter l = new VolumeQosLimiter();
        l.apply(new VolumeQos(0, 1_000, 3_000, 0, 0, 0, 0), 1L << 30, T0);
        long reads = 0;
        long writes = 0;
        for (long t = T0; t < T0 + 2 * SEC; t += STEP) {
            while (l.tryAcquire(Opcodes.IO_READ, 4096, t)) {
                reads++;
            }
            while (l.tryAcquire(Opcodes.IO_WRITE, 4096, t)) {
                writes++;
            }
        }
        assertTrue(reads >= 1_900 && reads <= 2_100, "reads " + reads);
        assertTrue(writes >= 5_700 && writes <= 6_300, "writes " + writes);
    }

    @Test
    void aCommandLargerThanTheBudgetIsAdmittedAndPaysItsDebt() {
        VolumeQosLimiter l = new VolumeQosLimiter();
        l.apply(new VolumeQos(0, 0, 0, 100 << 10, 0, 0, 0), 1L << 30, T0); // 100 KiB/s
        assertTrue(l.tryAcquire(Opcodes.IO_WRITE, 1L << 20, T0), "the first 1 MiB write goes");
        assertFalse(l.tryAcquire(Opcodes.IO_WRITE, 4096, T0 + SEC), "1 s later the debt of ~9 s remains");
        assertFalse(l.tryAcquire(Opcodes.IO_WRITE, 4096, T0 + 9 * SEC), "9 s later still in debt");
        assertTrue(l.tryAcquire(Opcodes.IO_WRITE, 4096, T0 + 11 * SEC), "after ~10.2 s the debt is paid");
    }

    @Test
    void flushAndDeallocateAreNotLimitedNorIsAVolumeWithoutLimits() {
        VolumeQosLimiter l = new VolumeQosLimiter();
        assertFalse(l.active());
        assertEquals(VolumeQos.NONE, l.limits());
        for (int i = 0; i < 100_000; i++) {
            assertTrue(l.tryAcquire(Opcodes.IO_WRITE, 1L << 20, T0));
        }
        l.apply(VolumeQos.ofIops(1), 1L << 30, T0);
        assertTrue(l.tryAcquire(Opcodes.IO_READ, 4096, T0));
        assertFalse(l.tryAcquire(Opcodes.IO_READ, 4096, T0));
        assertFalse(l.tryAcquire(Opcodes.IO_WRITE_ZEROES, 0, T0), "WRITE ZEROES counts as an I/O");
        for (int i = 0; i < 1_000; i++) {
            assertTrue(l.tryAcquire(Opcodes.IO_FLUSH, 0, T0));
            assertTrue(l.tryAcquire(Opcodes.IO_DATASET_MANAGEMENT, 0, T0));
        }
        l.apply(VolumeQos.NONE, 1L << 30, T0);
        assertFalse(l.active());
        assertTrue(l.tryAcquire(Opcodes.IO_READ, 4096, T0), "lifted at once");
    }

    @Test
    void iopsPerGiBScalesWithSizeWithinFloorAndCap() {
        VolumeQos q = new VolumeQos(0, 0, 0, 0, 0, 0, 0, 100, 500, 2_000);
        assertEquals(1_000, q.effectiveIops(10L << 30));
        assertEquals(500, q.effectiveIops(1L << 30), "floor");
        assertEquals(2_000, q.effectiveIops(100L << 30), "cap");
        assertEquals(700, new VolumeQos(700, 0, 0, 0, 0, 0, 0, 100, 0, 0).effectiveIops(10L << 30),
                "the lower of iops and the scaled limit");
        VolumeQosLimiter l = new VolumeQosLimiter();
        l.apply(q, 10L << 30, T0);
        long n = greedy(l, Opcodes.IO_READ, 4096, T0, 2 * SEC);
        assertTrue(n >= 1_900 && n <= 2_100, "admitted " + n + " in 2 s at 1,000");
        l.apply(q, 20L << 30, T0 + 2 * SEC); // grown: 2,000
        long grown = greedy(l, Opcodes.IO_READ, 4096, T0 + 2 * SEC, SEC);
        assertTrue(grown >= 1_900 && grown <= 2_100, "admitted " + grown + " in 1 s at 2,000");
    }
}
