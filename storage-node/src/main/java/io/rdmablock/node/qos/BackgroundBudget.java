package io.rdmablock.node.qos;

import io.rdmablock.node.metrics.BackgroundSource;
import io.rdmablock.node.metrics.ForegroundLatency;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The node's background budget (docs/qos.md, "Background budget"): one token bucket per node, in bytes, shared by
 * every resync, rebuild (a full resync) and verify of the node, whose rate adapts to the foreground's latency by
 * AIMD, after Vitastor's {@code recovery_tune_*} and Ceph's mClock client/recovery classes.
 *
 * <p>Every {@value #WINDOW_MS} ms (judged by the takers, metric scrapes and the node's {@link #startTicker ticker})
 * it reads the
 * node's {@link ForegroundLatency} (striped counters the pollers add to: the data path takes no lock) and takes the
 * mean latency of the foreground commands completed in the window, smoothed (half the new mean, half the old). Then:
 * <ul>
 *   <li>no foreground command in the window: the node is idle, the rate goes to the ceiling at once;</li>
 *   <li>fewer than {@value #MIN_SAMPLES} commands: the window grows (up to {@value #MAX_WINDOW_MS} ms) before it is
 *       judged;</li>
 *   <li>smoothed latency above the idle baseline by more than the slack ({@code latencySlackPct}, default
 *       {@value #DEFAULT_LATENCY_SLACK_PCT}%): multiplicative decrease, the rate halves, not below the floor;</li>
 *   <li>else additive increase: the rate grows by {@value #INCREASE_PCT}% of the ceiling, not above it (floor to
 *       ceiling within about a second).</li>
 * </ul>
 * The baseline is learned in windows when no background work asked for tokens within {@value #QUIET_MS} ms (it is
 * then the smoothed latency);
 * while background work runs it can only fall to a lower smoothed latency, or creep up by 0.1% a window (2%/s), so
 * a baseline measured on a quieter foreground does not hold background work at the floor for good.
 *
 * <p>Takers are served first come, first served (tickets): two resyncs waiting get alternate turns. A taker may run
 * into debt by one request; the next waits until the debt is paid at the rate of the moment (re-judged at least
 * every 10 ms). The bucket holds 100 ms of the rate, at least 256 KiB. Thread-safe; {@link #acquire} blocks.
 *
 * <p>The bounds change live with {@link #setBounds} (the management plane's setting for the node, carried by each
 * heartbeat answer): the rate is clamped into the new bounds at once, the bucket to 100 ms of it, and a taker
 * waiting on debt judges again within 10 ms. Only the background walkers take the lock (once per region), never a
 * foreground I/O.
 */
public final class BackgroundBudget implements BackgroundSource, AutoCloseable {
    /** Default ceiling, MiB/s ({@code --resync-mib-s}): the rate with the foreground idle or fast. */
    public static final int DEFAULT_CEILING_MIB_S = 40;
    /** Default floor, MiB/s ({@code --resync-min-mib-s}): background work never goes slower. */
    public static final int DEFAULT_FLOOR_MIB_S = 4;
    /** Default slack of the foreground latency over its idle baseline before background work slows, percent. */
    public static final int DEFAULT_LATENCY_SLACK_PCT = 50;
    /** Bounds of the slack, percent. */
    public static final int MIN_LATENCY_SLACK_PCT = 1;
    public static final int MAX_LATENCY_SLACK_PCT = 10_000;
    /** Length of a window, ms. */
    public static final long WINDOW_MS = 50;
    /** Longest a window grows while it holds fewer than {@link #MIN_SAMPLES} commands, ms. */
    public static final long MAX_WINDOW_MS = 500;
    /** Commands a window needs to be judged before {@link #MAX_WINDOW_MS}. */
    public static final int MIN_SAMPLES = 16;
    /** Additive increase per window, percent of the ceiling. */
    public static final int INCREASE_PCT = 5;
    /** Background work counts as running this long after it last asked for tokens, ms. */
    public static final long QUIET_MS = 1_000;
    static final long WINDOW_NS = WINDOW_MS * 1_000_000L;
    private static final long QUIET_NS = QUIET_MS * 1_000_000L;
    static final long MAX_WINDOW_NS = MAX_WINDOW_MS * 1_000_000L;
    private static final double BASELINE_CREEP = 0.001;
    private static final long MAX_PARK_NS = 10_000_000L;
    /** How often a taker that is not first in line looks again once the bucket is out of debt, ns. */
    private static final long TURN_NS = 100_000L;
    private static final long MIB = 1 << 20;

    private final double slack;
    private final ForegroundLatency foreground;
    private final LongSupplier clock;
    // all below guarded by this
    /** The bounds of the rate, bytes/s: from the constructor, changed live by {@link #setBounds}. */
    private double floor;
    private double ceiling;
    private double rate;
    private double tokens;
    private long lastNs;
    private long windowStartNs;
    private long seenCommands;
    private long seenLatencyNs;
    /** When a taker last asked, ns; valid once {@link #asked}. */
    private long lastAskNs;
    private boolean asked;
    private volatile boolean closed;
    private Thread ticker;
    private double signalNs;
    private double baselineNs;
    private long granted;
    private long nextTicket;
    private long serving;
    private final Set<Long> abandoned = new HashSet<>();

    /**
     * @param floorBytesPerSecond   the least rate, bytes/s, &gt; 0 (background work always progresses)
     * @param ceilingBytesPerSecond the greatest rate, bytes/s, &gt;= the floor (equal: a fixed rate)
     * @param latencySlackPct       how far the foreground latency may rise over its idle baseline before background
     *                              work slows, percent, {@value #MIN_LATENCY_SLACK_PCT}..{@value #MAX_LATENCY_SLACK_PCT}
     * @param foreground            the node's foreground latency signal
     * @param clock                 ns, monotonic ({@code System::nanoTime}; tests pass their own)
     * @throws IllegalArgumentException naming the parameter and its bounds
     */
    public BackgroundBudget(long floorBytesPerSecond, long ceilingBytesPerSecond, int latencySlackPct,
                            ForegroundLatency foreground, LongSupplier clock) {
        if (floorBytesPerSecond <= 0 || ceilingBytesPerSecond < floorBytesPerSecond) {
            throw new IllegalArgumentException("invalid background budget: floorBytesPerSecond=" + floorBytesPerSecond
                    + ", ceilingBytesPerSecond=" + ceilingBytesPerSecond + ": want 0 < floor <= ceiling");
        }
        if (latencySlackPct < MIN_LATENCY_SLACK_PCT || latencySlackPct > MAX_LATENCY_SLACK_PCT) {
            throw new IllegalArgumentException("invalid latencySlackPct: value=" + latencySlackPct + ", min="
                    + MIN_LATENCY_SLACK_PCT + ", max=" + MAX_LATENCY_SLACK_PCT);
        }
        this.floor = floorBytesPerSecond;
        this.ceiling = ceilingBytesPerSecond;
        this.slack = latencySlackPct / 100.0;
        this.foreground = java.util.Objects.requireNonNull(foreground, "foreground");
        this.clock = java.util.Objects.requireNonNull(clock, "clock");
        this.rate = ceiling;
        this.tokens = burst(ceiling);
        this.lastNs = clock.getAsLong();
        this.windowStartNs = lastNs;
        this.seenCommands = foreground.commands();
        this.seenLatencyNs = foreground.latencyNs();
    }

    /** A budget in MiB/s on the real clock (the node's options), with the default slack. */
    public static BackgroundBudget ofMib(int floorMibPerSecond, int ceilingMibPerSecond, ForegroundLatency foreground) {
        return new BackgroundBudget(floorMibPerSecond * MIB, ceilingMibPerSecond * MIB, DEFAULT_LATENCY_SLACK_PCT,
                foreground, System::nanoTime);
    }

    /** 100 ms worth of {@code bytesPerSecond}, at least 256 KiB (a few regions), bytes. */
    private static double burst(double bytesPerSecond) {
        return Math.max(256 * 1024, bytesPerSecond / 10);
    }

    /**
     * Takes {@code bytes} in turn: at once when it is this taker's turn and the bucket is not in debt (it may go into
     * debt by this request), else waits (parked at most 10 ms at a time).
     *
     * @return false when {@code stop} said so while waiting (nothing taken)
     */
    public boolean acquire(long bytes, BooleanSupplier stop) {
        long ticket = ticket();
        boolean granted = false;
        try {
            while (true) { // bounded: the takers ahead each take once, any debt is paid at >= the floor (or stop)
                long waitNs = tryTake(ticket, bytes, clock.getAsLong());
                if (waitNs == 0) {
                    granted = true;
                    return true;
                }
                if (stop.getAsBoolean()) {
                    return false;
                }
                LockSupport.parkNanos(waitNs);
            }
        } finally {
            if (!granted) {
                abandon(ticket);
            }
        }
    }

    /** A place in line for {@link #tryTake}. */
    synchronized long ticket() {
        return nextTicket++;
    }

    /**
     * The holder of {@code ticket} asks for {@code bytes} at {@code nowNs}.
     *
     * @return 0 when granted (the ticket is used up), else how long to wait before asking again, ns (&gt; 0)
     */
    synchronized long tryTake(long ticket, long bytes, long nowNs) {
        refill(nowNs);
        asked = true;
        lastAskNs = nowNs;
        if (tokens < 0) {
            return Math.min(MAX_PARK_NS, Math.max(1, (long) (-tokens / rate * 1e9))) + (ticket == serving ? 0 : TURN_NS);
        }
        if (ticket != serving) {
            return TURN_NS;
        }
        tokens -= bytes;
        granted += bytes;
        next();
        return 0;
    }

    /** The holder of {@code ticket} gave up waiting: the line moves past it. */
    synchronized void abandon(long ticket) {
        if (ticket == serving) {
            next();
        } else if (ticket > serving) {
            abandoned.add(ticket);
        }
    }

    private void next() {
        serving++;
        while (abandoned.remove(serving)) { // bounded: each abandoned ticket is removed once
            serving++;
        }
    }

    /** Under the lock: adds the tokens earned since the last call, then judges the window if it is over. */
    private void refill(long nowNs) {
        long dt = Math.max(0, nowNs - lastNs);
        lastNs = Math.max(lastNs, nowNs);
        tokens = Math.min(burst(rate), tokens + dt * rate / 1e9);
        adapt(nowNs);
    }

    private void adapt(long nowNs) {
        long elapsed = nowNs - windowStartNs;
        if (elapsed < WINDOW_NS) {
            return;
        }
        long commands = foreground.commands();
        long latency = foreground.latencyNs();
        long n = commands - seenCommands;
        if (n <= 0) {
            rate = ceiling; // idle foreground: full speed
        } else if (n < MIN_SAMPLES && elapsed < MAX_WINDOW_NS) {
            return; // too few to judge: the window grows
        } else {
            double mean = (double) Math.max(0, latency - seenLatencyNs) / n;
            signalNs = signalNs == 0 ? mean : (signalNs + mean) / 2;
            boolean quiet = !asked || nowNs - lastAskNs >= QUIET_NS;
            if (quiet || baselineNs == 0) {
                baselineNs = signalNs;
            } else {
                baselineNs = Math.min(signalNs, baselineNs * (1 + BASELINE_CREEP));
            }
            if (signalNs > baselineNs * (1 + slack)) {
                rate = Math.max(floor, rate / 2);
            } else {
                rate = Math.min(ceiling, rate + ceiling * INCREASE_PCT / 100);
            }
        }
        windowStartNs = nowNs;
        seenCommands = commands;
        seenLatencyNs = latency;
    }

    /**
     * Starts a daemon thread that judges the windows every {@value #WINDOW_MS} ms even while no taker asks, so the
     * baseline is learned while background work is quiet; {@link #close} stops it. Once per budget.
     *
     * @return this
     * @throws IllegalStateException when already started
     */
    public synchronized BackgroundBudget startTicker() {
        if (ticker != null) {
            throw new IllegalStateException("ticker already started");
        }
        ticker = Thread.ofPlatform().daemon().name("background-budget").start(() -> {
            while (!closed) { // bounded by close(): one judgement per window
                LockSupport.parkNanos(WINDOW_NS);
                rateBytesPerSecond();
            }
        });
        return this;
    }

    /** Stops the ticker, if any (waits at most one window for it). */
    @Override
    public void close() {
        closed = true;
        Thread t;
        synchronized (this) {
            t = ticker;
        }
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(2 * WINDOW_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The rate at {@code nowNs} (the window judged first if it is over), bytes/s. */
    synchronized long rateBytesPerSecond(long nowNs) {
        refill(nowNs);
        return (long) rate;
    }

    @Override
    public long rateBytesPerSecond() {
        return rateBytesPerSecond(clock.getAsLong());
    }

    @Override
    public synchronized long grantedBytes() {
        return granted;
    }

    @Override
    public synchronized long baselineNs() {
        return (long) baselineNs;
    }

    @Override
    public synchronized long signalNs() {
        return (long) signalNs;
    }

    /** The floor, bytes/s. */
    public synchronized long floorBytesPerSecond() {
        return (long) floor;
    }

    /** The ceiling, bytes/s. */
    public synchronized long ceilingBytesPerSecond() {
        return (long) ceiling;
    }

    /**
     * Changes the bounds live (docs/qos.md, "Background budget": the node's setting from the management plane). The
     * rate now is clamped into them at once (a lower ceiling slows background work from its next request; a higher
     * floor speeds it up), saved tokens are capped to 100 ms of the new rate, and the AIMD goes on between the new
     * bounds (its additive step is 5% of the new ceiling). Thread-safe.
     *
     * @param ceilingBytesPerSec the greatest rate, bytes/s, &gt;= the floor
     * @param floorBytesPerSec   the least rate, bytes/s, &gt; 0
     * @return true when the bounds changed
     * @throws IllegalArgumentException naming both and the rule {@code 0 < floor <= ceiling}; nothing changes
     */
    public boolean setBounds(long ceilingBytesPerSec, long floorBytesPerSec) {
        if (floorBytesPerSec <= 0 || ceilingBytesPerSec < floorBytesPerSec) {
            throw new IllegalArgumentException("invalid background budget: floorBytesPerSecond=" + floorBytesPerSec
                    + ", ceilingBytesPerSecond=" + ceilingBytesPerSec + ": want 0 < floor <= ceiling");
        }
        synchronized (this) {
            refill(clock.getAsLong()); // tokens earned so far at the old rate
            if (ceiling == ceilingBytesPerSec && floor == floorBytesPerSec) {
                return false;
            }
            ceiling = ceilingBytesPerSec;
            floor = floorBytesPerSec;
            rate = Math.min(ceiling, Math.max(floor, rate));
            tokens = Math.min(tokens, burst(rate));
            return true;
        }
    }
}
