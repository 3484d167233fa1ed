package io.rdmablock.tools.replay;

import io.rdmablock.initiator.BlockDevice;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Replays a {@link Trace} on a {@link BlockDevice} exactly as written, with up to {@code iodepth} requests in flight,
 * verifying every read against a {@link SectorModel} of what the replay wrote (the trace's own bytes). Requests are
 * issued in trace order at {@code timeScalePercent} of the trace's rate, as fio's {@code replay_time_scale} (the gap
 * since the first request is multiplied by 100 / timeScalePercent: 100 = the trace's pace, 200 = twice as fast, 50 =
 * half as fast; 0 = as fast as possible); a request that overlaps one still in flight
 * waits for it, so the model is exact at every instant.
 *
 * <p>A request whose offset or length is not a multiple of the device's LBA size is carried out exactly: a read
 * reads the whole blocks it touches and checks them; a write reads the whole blocks (checking the bytes it keeps
 * against the model), puts the request's bytes in place and writes the blocks back (read-modify-write of the
 * partial blocks). The count is in {@link Result#misaligned()}. Requests must be multiples of 512 bytes (the model's
 * sector) and lie inside the device ({@link Trace#foldedInto}); otherwise {@link #run} refuses before the first I/O.
 * The device must start zeroed (a fresh volume).
 */
public final class TraceReplay {

    /** Summary of one replay. {@code latencyNs} percentiles from an HdrHistogram of every request. */
    public record Result(int requests, int reads, int writes, long bytesRead, long bytesWritten, long elapsedNs,
                         long p50Ns, long p99Ns, long maxNs, long readsVerified, long mismatches, long errors,
                         List<String> firstProblems, int misaligned, int lbaSize, long late) {
        public double iops() {
            return requests * 1e9 / Math.max(1, elapsedNs);
        }

        public boolean ok() {
            return mismatches == 0 && errors == 0;
        }
    }

    private record Done(int slot, long latencyNs, String problem, boolean mismatch) {
    }

    /** Completion bookkeeping, touched only by the dispatching thread. */
    private static final class Stats {
        final Histogram hist = new Histogram(3_600_000_000_000L, 3);
        final List<String> problems = new ArrayList<>();
        long mismatches;
        long errors;

        /** Takes one completion (waiting until {@code deadlineNs}), records it, returns its slot. */
        int take(ArrayBlockingQueue<Done> done, long deadlineNs, int inFlight) throws InterruptedException {
            Done d = done.poll(Math.max(1, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (d == null) {
                throw new IllegalStateException("replay timed out with " + inFlight + " requests in flight");
            }
            hist.recordValue(Math.min(d.latencyNs, hist.getHighestTrackableValue()));
            if (d.problem != null) {
                if (d.mismatch) {
                    mismatches++;
                } else {
                    errors++;
                }
                if (problems.size() < 10) {
                    problems.add(d.problem);
                }
            }
            return d.slot;
        }
    }

    static final long LATE_NS = 1_000_000L;
    private final BlockDevice dev;
    private final int iodepth;
    private final long timeoutNs;
    private final int timeScalePercent;

    /**
     * @param iodepth          requests in flight, 1 .. 256
     * @param timeoutNs        bound on the whole replay; requests not issued by then are skipped (reported as errors)
     * @param timeScalePercent percent of the trace's rate, 0 (as fast as possible) .. 100000; 100 = its timestamps
     */
    public TraceReplay(BlockDevice dev, int iodepth, long timeoutNs, int timeScalePercent) {
        if (iodepth < 1 || iodepth > 256) {
            throw new IllegalArgumentException("invalid iodepth: iodepth=" + iodepth + ", min=1, max=256");
        }
        if (timeScalePercent < 0 || timeScalePercent > 100_000) {
            throw new IllegalArgumentException("invalid replay-time-scale: " + timeScalePercent + ", min=0, max=100000");
        }
        this.dev = dev;
        this.iodepth = iodepth;
        this.timeoutNs = timeoutNs;
        this.timeScalePercent = timeScalePercent;
    }

    /** @throws IllegalArgumentException before any I/O when a request is not 512-byte granular or lies outside */
    public static void check(Trace trace, long capacityBytes) {
        for (int i = 0; i < trace.count(); i++) {
            long off = trace.offsets()[i];
            int len = trace.lengths()[i];
            if (off % SectorModel.SECTOR != 0 || len % SectorModel.SECTOR != 0) {
                throw new IllegalArgumentException("invalid trace: line " + trace.lines()[i] + ": offset=" + off
                        + " length=" + len + " is not a multiple of 512 bytes (the replay verifies whole sectors)");
            }
            if (off < 0 || off + len > capacityBytes) {
                throw new IllegalArgumentException("invalid trace: line " + trace.lines()[i] + ": offset=" + off
                        + " length=" + len + " lies outside the device of " + capacityBytes + " bytes");
            }
        }
    }

    public Result run(Trace trace) throws InterruptedException {
        check(trace, dev.capacityBytes());
        int lba = dev.lbaSize();
        SectorModel model = new SectorModel(dev.capacityBytes());
        int bufBytes = trace.maxLength() + 2 * lba;
        MemorySegment[] bufs = new MemorySegment[iodepth];
        long[] slotOff = new long[iodepth];
        long[] slotEnd = new long[iodepth];
        boolean[] busy = new boolean[iodepth];
        ArrayBlockingQueue<Done> done = new ArrayBlockingQueue<>(iodepth);
        Stats stats = new Stats();
        long verified = 0;
        long bytesRead = 0;
        long bytesWritten = 0;
        long late = 0;
        int reads = 0;
        int writes = 0;
        int version = 0;
        int inFlight = 0;
        for (int i = 0; i < iodepth; i++) {
            bufs[i] = dev.allocateBuffer(bufBytes);
        }
        long start = System.nanoTime();
        long deadline = start + timeoutNs;
        long t0 = trace.timesNs()[0];
        int issued = 0;
        try {
            for (; issued < trace.count(); issued++) {
                long off = trace.offsets()[issued];
                int len = trace.lengths()[issued];
                long a0 = off / lba * lba;
                long a1 = (off + len + lba - 1) / lba * lba;
                long due = timeScalePercent == 0 ? start
                        : start + (trace.timesNs()[issued] - t0) * 100 / timeScalePercent;
                while (due - System.nanoTime() > 0 && System.nanoTime() < deadline) {
                    LockSupport.parkNanos(Math.min(due - System.nanoTime(), 10_000_000L));
                }
                // wait for a free slot and for every request overlapping the blocks this one touches to finish
                int slot;
                while (true) {
                    slot = -1;
                    boolean overlap = false;
                    for (int s = 0; s < iodepth; s++) {
                        if (!busy[s]) {
                            slot = slot < 0 ? s : slot;
                        } else if (slotOff[s] < a1 && a0 < slotEnd[s]) {
                            overlap = true;
                        }
                    }
                    if (slot >= 0 && !overlap) {
                        break;
                    }
                    busy[stats.take(done, deadline, inFlight)] = false;
                    inFlight--;
                }
                long now = System.nanoTime();
                if (now > deadline) {
                    break;
                }
                if (timeScalePercent > 0 && now - due > LATE_NS) {
                    late++;
                }
                MemorySegment ext = bufs[slot].asSlice(0, a1 - a0);
                busy[slot] = true;
                slotOff[slot] = a0;
                slotEnd[slot] = a1;
                inFlight++;
                final int s = slot;
                final long tStart = System.nanoTime();
                final int line = trace.lines()[issued];
                CompletableFuture<String> f;
                if (trace.reads()[issued]) {
                    reads++;
                    bytesRead += len;
                    verified++;
                    f = dev.read(a0, ext).thenApply(v -> {
                        long bad = model.verify(ext, a0, 0, a1 - a0);
                        return bad < 0 ? null : "read line " + line + " offset=" + off + " length=" + len
                                + ": sector " + bad + " differs from what the trace wrote";
                    });
                } else {
                    writes++;
                    bytesWritten += len;
                    int v = ++version;
                    model.record(off, len, v);
                    if (a0 == off && a1 == off + len) {
                        SectorModel.fill(ext, 0, off, len, v);
                        f = dev.write(off, ext, false).thenApply(x -> null);
                    } else {
                        f = dev.read(a0, ext).thenCompose(x -> {
                            long bad = model.verify(ext, a0, 0, off - a0);
                            if (bad < 0) {
                                bad = model.verify(ext, a0, off + len - a0, a1 - a0);
                            }
                            SectorModel.fill(ext, off - a0, off, len, v);
                            String problem = bad < 0 ? null : "read-modify-write line " + line + " offset=" + off
                                    + " length=" + len + ": kept sector " + bad + " differs from what the trace wrote";
                            return dev.write(a0, ext, false).thenApply(y -> problem);
                        });
                    }
                }
                f.whenComplete((problem, e) -> {
                    long lat = System.nanoTime() - tStart;
                    if (e != null) {
                        done.add(new Done(s, lat, "line " + line + " offset=" + off
                                + " length=" + len + " failed: " + e, false));
                    } else {
                        done.add(new Done(s, lat, problem, problem != null));
                    }
                });
            }
            while (inFlight > 0) {
                busy[stats.take(done, deadline + 30_000_000_000L, inFlight)] = false;
                inFlight--;
            }
        } finally {
            if (inFlight == 0) {
                for (MemorySegment b : bufs) {
                    if (b != null) {
                        dev.freeBuffer(b);
                    }
                }
            }
        }
        long elapsed = System.nanoTime() - start;
        int skipped = trace.count() - issued;
        if (skipped > 0) {
            stats.errors += skipped;
            stats.problems.add(skipped + " requests not issued before the replay deadline");
        }
        Histogram h = stats.hist;
        return new Result(issued, reads, writes, bytesRead, bytesWritten, elapsed, h.getValueAtPercentile(50),
                h.getValueAtPercentile(99), h.getMaxValue(), verified - stats.mismatches, stats.mismatches,
                stats.errors, List.copyOf(stats.problems), trace.misaligned(lba), lba, late);
    }
}
