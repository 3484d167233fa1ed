package io.rdmablock.node.qos;

import io.rdmablock.mgmt.client.VolumeQos;
import io.rdmablock.rdma.fabric.Opcodes;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The limits of one volume on this node and their budgets, shared by every I/O queue of the volume (every host,
 * every poller thread): one token bucket per limit ({@link VolumeQos}: total, read and write IOPS, total, read and
 * write bytes/s), refilled by time in 1 ms slices (SPDK {@code lib/bdev/bdev.c} QoS: a quota per time slice shared
 * by the channels, taken with atomics, an overrun carried into the next slice as debt).
 *
 * <p><b>Model.</b> Tokens are counted in thousandths of an I/O (or of a byte), so a limit of {@code L} per second
 * adds exactly {@code L} per 1 ms slice. A command is admitted when every bucket it counts against is above 0 before
 * it takes its cost (1 I/O, its payload bytes); a bucket may go below 0 by what the admitted commands took (a 1 MiB
 * write under a 100 KiB/s limit is admitted and pays its debt over the next slices), so the long-run rate is the
 * limit however large the commands. A bucket holds at most {@code burstSeconds - 1} seconds of the limit plus
 * {@value #SMOOTHING_SLICES} ms of it (which absorbs the jitter of the pollers' rounds): an idle volume may thus use
 * {@code burstSeconds} seconds' worth of a limit in its first second, then the limit. The first thread of a new slice
 * refills (compare-and-set on the slice number); nothing else is shared.
 *
 * <p><b>Cost.</b> {@link #tryAcquire} reads one volatile field when the volume has no limit; with limits, one atomic
 * add per bucket the command counts against (two more to give back when a later bucket refuses) and, once per slice
 * per volume, the refill. No lock, no allocation. {@link #apply} (management thread) publishes new limits at once:
 * buckets keep their tokens, capped to the new depth; a bucket that had no limit starts full.
 *
 * <p>Thread-safe.
 */
public final class VolumeQosLimiter {
    /** The refill slice, ns (1 ms). */
    public static final long SLICE_NS = 1_000_000L;
    /** Tokens per I/O or byte: a limit of L per second refills L tokens per slice. */
    static final long SCALE = 1000;
    /**
     * Slices of the limit a bucket holds beyond the burst credit (50 ms): a poller that did not run for a while (a
     * loaded machine, an idle wait) does not lose budget. Measured (ops/bench/qos, 2 busy cores): 10 ms lost up to 4%.
     */
    static final long SMOOTHING_SLICES = 50;
    static final int IOPS = 0;
    static final int READ_IOPS = 1;
    static final int WRITE_IOPS = 2;
    static final int BYTES = 3;
    static final int READ_BYTES = 4;
    static final int WRITE_BYTES = 5;
    private static final int BUCKETS = 6;

    /** The limits in force, null when none: the one volatile read of an unlimited volume's command. */
    private volatile Rates rates;
    private final AtomicLongArray tokens = new AtomicLongArray(BUCKETS);
    /** The last slice refilled ({@link Math#floorDiv} of the clock by {@link #SLICE_NS}). */
    private final AtomicLong slice = new AtomicLong();
    private final AtomicInteger held = new AtomicInteger();
    private final AtomicLong delayedNs = new AtomicLong();

    /**
     * The limits in force: per bucket the tokens added per slice (= the limit per second, 0 = no limit) and the most
     * a bucket holds; {@code limits} as given, for {@link #limits()}.
     */
    private record Rates(VolumeQos limits, long sizeBytes, long[] perSlice, long[] depth) {
    }

    /** @return true when commands of {@code opcode} count against limits (READ, WRITE, WRITE ZEROES) */
    public static boolean limited(int opcode) {
        return opcode == Opcodes.IO_READ || opcode == Opcodes.IO_WRITE || opcode == Opcodes.IO_WRITE_ZEROES;
    }

    /** {@link #apply(VolumeQos, long, long)} at {@link System#nanoTime()}. */
    public void apply(VolumeQos limits, long sizeBytes) {
        apply(limits, sizeBytes, System.nanoTime());
    }

    /**
     * Puts {@code limits} in force for a volume of {@code sizeBytes} (which scales {@link VolumeQos#iopsPerGiB}), from
     * the next command on. The same limits and size change nothing (called at every heartbeat answer). Null or
     * {@link VolumeQos#unlimited()} lifts every limit (held commands go at the next poll round).
     *
     * @param nowNs the clock ({@link System#nanoTime()} scale, as the pollers pass to {@link #tryAcquire})
     */
    public synchronized void apply(VolumeQos limits, long sizeBytes, long nowNs) {
        Rates old = rates;
        if (limits == null || limits.unlimited()) {
            rates = null;
            return;
        }
        if (old != null && old.limits().equals(limits) && old.sizeBytes() == sizeBytes) {
            return;
        }
        long[] perSlice = {limits.effectiveIops(sizeBytes), limits.readIops(), limits.writeIops(),
                limits.bytesPerSec(), limits.readBytesPerSec(), limits.writeBytesPerSec()};
        long[] depth = new long[BUCKETS];
        long burst = limits.effectiveBurstSeconds();
        for (int i = 0; i < BUCKETS; i++) {
            long l = Math.max(0, perSlice[i]);
            perSlice[i] = l;
            // at most 2^40 x 1000 x 3599 + 2^40 x 50 < 2^62: no overflow, nor at a refill (t + add <= 2 x depth)
            depth[i] = l * SCALE * (burst - 1) + l * SMOOTHING_SLICES;
            if (l == 0) {
                continue;
            }
            if (old == null || old.perSlice()[i] == 0) {
                tokens.set(i, depth[i]);
            } else {
                long t;
                do {
                    t = tokens.get(i);
                } while (t > depth[i] && !tokens.compareAndSet(i, t, depth[i]));
            }
        }
        if (old == null) {
            slice.set(Math.floorDiv(nowNs, SLICE_NS));
        }
        rates = new Rates(limits, sizeBytes, perSlice, depth);
    }

    /** The limits in force; {@link VolumeQos#NONE} when none. */
    public VolumeQos limits() {
        Rates r = rates;
        return r == null ? VolumeQos.NONE : r.limits();
    }

    /** True when some limit is in force. */
    public boolean active() {
        return rates != null;
    }

    /**
     * Takes the budget of one command, or refuses it: the command then waits (its queue tries again on a later poll
     * round). Any thread; no lock, no allocation.
     *
     * @param opcode     the NVM opcode; only READ, WRITE and WRITE ZEROES count ({@link #limited})
     * @param bytes      the command's payload bytes (READ, WRITE), &gt;= 0; ignored for WRITE ZEROES
     * @param nowNs      the clock ({@link System#nanoTime()} scale)
     * @return true when admitted (or not limited), false when over budget
     */
    public boolean tryAcquire(int opcode, long bytes, long nowNs) {
        Rates r = rates;
        if (r == null) {
            return true;
        }
        int classIops;
        int classBytes;
        long byteCost;
        switch (opcode) {
            case Opcodes.IO_READ -> {
                classIops = READ_IOPS;
                classBytes = READ_BYTES;
                byteCost = bytes * SCALE;
            }
            case Opcodes.IO_WRITE -> {
                classIops = WRITE_IOPS;
                classBytes = WRITE_BYTES;
                byteCost = bytes * SCALE;
            }
            case Opcodes.IO_WRITE_ZEROES -> {
                classIops = WRITE_IOPS;
                classBytes = WRITE_BYTES;
                byteCost = 0;
            }
            default -> {
                return true;
            }
        }
        long[] ps = r.perSlice();
        refill(r, nowNs);
        if (!take(ps, IOPS, SCALE)) {
            return false;
        }
        if (!take(ps, classIops, SCALE)) {
            give(ps, IOPS, SCALE);
            return false;
        }
        if (byteCost > 0) {
            if (!take(ps, BYTES, byteCost)) {
                give(ps, IOPS, SCALE);
                give(ps, classIops, SCALE);
                return false;
            }
            if (!take(ps, classBytes, byteCost)) {
                give(ps, IOPS, SCALE);
                give(ps, classIops, SCALE);
                give(ps, BYTES, byteCost);
                return false;
            }
        }
        return true;
    }

    /** Takes {@code cost} from bucket {@code i} when it is above 0 (SPDK's rule: the last one in may overrun). */
    private boolean take(long[] perSlice, int i, long cost) {
        if (perSlice[i] == 0) {
            return true;
        }
        if (tokens.getAndAdd(i, -cost) > 0) {
            return true;
        }
        tokens.getAndAdd(i, cost);
        return false;
    }

    private void give(long[] perSlice, int i, long cost) {
        if (perSlice[i] != 0) {
            tokens.getAndAdd(i, cost);
        }
    }

    /** Adds the slices passed since the last refill to every limited bucket (the thread winning the slice does). */
    private void refill(Rates r, long nowNs) {
        long s = Math.floorDiv(nowNs, SLICE_NS);
        long last = slice.get();
        if (s <= last || !slice.compareAndSet(last, s)) {
            return;
        }
        long n = s - last;
        long[] ps = r.perSlice();
        long[] depth = r.depth();
        for (int i = 0; i < BUCKETS; i++) {
            long l = ps[i];
            if (l == 0) {
                continue;
            }
            long t;
            long next;
            do {
                t = tokens.get(i);
                long room = depth[i] - t; // > depth while in debt: a long gap repays the debt too
                next = n > room / l ? depth[i] : t + l * n; // no overflow: l x n <= room + l
            } while (next > t && !tokens.compareAndSet(i, t, next));
        }
    }

    /** A command of this volume was held (it waits in its queue). */
    void held() {
        held.incrementAndGet();
    }

    /** A held command was admitted after {@code waitedNs}, or dropped (queue closed: {@code waitedNs} 0). */
    void released(long waitedNs) {
        held.decrementAndGet();
        if (waitedNs > 0) {
            delayedNs.addAndGet(waitedNs);
        }
    }

    /** Commands of this volume waiting for budget now, over all its queues. */
    public int heldCommands() {
        return held.get();
    }

    /** Total time commands of this volume waited for budget, seconds (a counter). */
    public double delayedSeconds() {
        return delayedNs.get() / 1e9;
    }

    /** Tokens of bucket {@code i} (thousandths), for tests. */
    long tokens(int i) {
        return tokens.get(i);
    }

    @Override
    public String toString() {
        Rates r = rates;
        return "VolumeQosLimiter[" + (r == null ? "no limit" : r.limits() + ", perSlice="
                + Arrays.toString(r.perSlice())) + ", held=" + held.get() + "]";
    }
}
