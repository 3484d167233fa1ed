package io.rdmablock.initiator.replay;

import io.rdmablock.initiator.BlockDevice;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Replays a {@link Trace} on a {@link BlockDevice} as fast as possible with up to {@code iodepth} requests in flight,
 * verifying every read against a {@link SectorModel} of what the replay wrote. Requests are issued in trace order; a
 * request that overlaps one still in flight waits for it, so the model is exact at every instant. The device must
 * start zeroed (a fresh volume), or {@code assumeZero} must be false (reads of never-written sectors are not checked).
 */
public final class TraceReplay {

    /** Summary of one replay. {@code latencyNs} percentiles from an HdrHistogram of every request. */
    public record Result(int requests, int reads, int writes, long bytesRead, long bytesWritten, long elapsedNs,
                         long p50Ns, long p99Ns, long maxNs, long readsVerified, long mismatches, long errors,
                         List<String> firstProblems) {
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

    private final BlockDevice dev;
    private final int iodepth;
    private final long timeoutNs;

    /**
     * @param iodepth   requests in flight, 1 .. 256
     * @param timeoutNs bound on the whole replay; requests not issued by then are skipped (reported as errors)
     */
    public TraceReplay(BlockDevice dev, int iodepth, long timeoutNs) {
        if (iodepth < 1 || iodepth > 256) {
            throw new IllegalArgumentException("invalid iodepth: iodepth=" + iodepth + ", min=1, max=256");
        }
        this.dev = dev;
        this.iodepth = iodepth;
        this.timeoutNs = timeoutNs;
    }

    public Result run(Trace trace, int maxRequestBytes) throws InterruptedException {
        SectorModel model = new SectorModel(dev.capacityBytes());
        MemorySegment[] bufs = new MemorySegment[iodepth];
        long[] slotOff = new long[iodepth];
        long[] slotEnd = new long[iodepth];
        boolean[] busy = new boolean[iodepth];
        ArrayBlockingQueue<Done> done = new ArrayBlockingQueue<>(iodepth);
        Stats stats = new Stats();
        long verified = 0;
        long bytesRead = 0;
        long bytesWritten = 0;
        int reads = 0;
        int writes = 0;
        int version = 0;
        int inFlight = 0;
        for (int i = 0; i < iodepth; i++) {
            bufs[i] = dev.allocateBuffer(maxRequestBytes);
        }
        long start = System.nanoTime();
        long deadline = start + timeoutNs;
        int issued = 0;
        try {
            for (; issued < trace.count(); issued++) {
                long off = trace.offsets()[issued];
                int len = trace.lengths()[issued];
                // wait for a free slot and for every overlapping request to finish
                int slot;
                while (true) {
                    slot = -1;
                    boolean overlap = false;
                    for (int s = 0; s < iodepth; s++) {
                        if (!busy[s]) {
                            slot = slot < 0 ? s : slot;
                        } else if (slotOff[s] < off + len && off < slotEnd[s]) {
                            overlap = true;
                        }
                    }
                    if (slot >= 0 && !overlap) {
                        break;
                    }
                    busy[stats.take(done, deadline, inFlight)] = false;
                    inFlight--;
                }
                if (System.nanoTime() > deadline) {
                    break;
                }
                MemorySegment buf = bufs[slot].asSlice(0, len);
                busy[slot] = true;
                slotOff[slot] = off;
                slotEnd[slot] = off + len;
                inFlight++;
                final int s = slot;
                final long t0 = System.nanoTime();
                if (trace.reads()[issued]) {
                    reads++;
                    bytesRead += len;
                    verified++;
                    dev.read(off, buf).whenComplete((v, e) -> {
                        long lat = System.nanoTime() - t0;
                        if (e != null) {
                            done.add(new Done(s, lat, "read offset=" + off + " length=" + len + " failed: " + e, false));
                            return;
                        }
                        long bad = model.verify(buf, off, len);
                        done.add(new Done(s, lat, bad < 0 ? null : "read offset=" + off + " length=" + len
                                + ": sector " + bad + " differs from the model", bad >= 0));
                    });
                } else {
                    writes++;
                    bytesWritten += len;
                    model.fillForWrite(buf, off, len, ++version);
                    dev.write(off, buf, false).whenComplete((v, e) -> done.add(new Done(s, System.nanoTime() - t0,
                            e == null ? null : "write offset=" + off + " length=" + len + " failed: " + e, false)));
                }
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
                stats.errors, List.copyOf(stats.problems));
    }
}
