package io.rdmablock.tools.bench;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.tools.replay.Trace;
import io.rdmablock.tools.replay.TraceFormat;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Replays a block trace ({@code --replay=FILE}, any {@link TraceFormat}, detected from its first line) for its
 * performance: requests as written, offsets beyond the device folded into it ({@link Trace#foldedInto}, counted in
 * a warning line). A request whose offset or length is not a multiple of the device's LBA size is refused before the
 * first I/O, naming the first one, the LBA size and how many there are: {@code rdmablock replay} carries such
 * requests out exactly (read-modify-write) and verifies them.
 *
 * <p>A dispatcher thread issues each request at its timestamp, at {@code timeScalePercent} of the trace's rate as
 * fio's {@code replay_time_scale} (100 = the trace's pace, 200 = twice as fast; as fast as possible with
 * {@code noStall} or 0) on one of {@code iodepth} units; when every unit is busy the request waits (the
 * stall is visible as latency in the trace's time base being stretched). Stops at the end of the trace or after
 * {@code runtime}.
 */
final class ReplayWorker extends Job {
    private final BlockDevice dev;
    private final long[] timeNs;
    private final long[] offsets;
    private final int[] lengths;
    private final boolean[] reads;
    private final int count;
    private final boolean noStall;
    private final int timeScalePercent;
    private final ArrayBlockingQueue<RUnit> free;
    private final RUnit[] units;
    private Thread dispatcher;

    private final class RUnit {
        final MemorySegment buffer;
        final DirStats read = new DirStats();
        final DirStats write = new DirStats();
        long t0;
        long t1;
        boolean isRead;
        int length;

        RUnit(MemorySegment buffer) {
            this.buffer = buffer;
            unitStats.add(new DirStats[] {read, write});
        }
    }

    /** @throws IllegalArgumentException for a missing or malformed trace, or requests not aligned to the LBA size */
    ReplayWorker(JobSpec spec, BlockDevice dev, Path trace, boolean noStall, int timeScalePercent) throws IOException {
        super(spec, "replay", 1);
        this.dev = dev;
        this.noStall = noStall;
        this.timeScalePercent = timeScalePercent;
        int lba = dev.lbaSize();
        Trace t = Trace.load(trace, null, Integer.MAX_VALUE).foldedInto(dev.capacityBytes());
        int mis = t.misaligned(lba);
        if (mis > 0) {
            int i = t.firstMisaligned(lba);
            throw new IllegalArgumentException("invalid --replay: " + mis + " of " + t.count() + " requests are not"
                    + " aligned to the " + lba + "-byte LBA size, first: line " + t.lines()[i] + " offset="
                    + t.offsets()[i] + " length=" + t.lengths()[i] + " (nothing was issued; `rdmablock replay` carries"
                    + " them out with read-modify-write)");
        }
        if (t.folded() > 0) {
            spec.warnings.add(t.folded() + " of " + t.count() + " trace requests lie beyond the " + dev.capacityBytes()
                    + "-byte device: folded into it (offset mod capacity)");
        }
        this.count = t.count();
        this.timeNs = t.timesNs();
        this.offsets = t.offsets();
        this.lengths = t.lengths();
        this.reads = t.reads();
        this.free = new ArrayBlockingQueue<>(spec.iodepth);
        this.units = new RUnit[spec.iodepth];
        for (int i = 0; i < units.length; i++) {
            units[i] = new RUnit(dev.allocateBuffer(Math.max(lba, t.maxLength())));
            free.add(units[i]);
        }
    }

    int requestCount() {
        return count;
    }

    @Override
    void start() {
        dispatcher = Thread.ofPlatform().name("replay-dispatch").daemon().start(this::dispatch);
    }

    private void dispatch() {
        long t0 = timeNs[0];
        try {
            for (int i = 0; i < count && !stop; i++) {
                long now = System.nanoTime();
                if (endNs != 0 && now - endNs >= 0) {
                    break;
                }
                if (!noStall && timeScalePercent > 0) {
                    long due = startNs + (timeNs[i] - t0) * 100 / timeScalePercent;
                    while (due - System.nanoTime() > 0 && !stop) {
                        LockSupport.parkNanos(due - System.nanoTime());
                    }
                }
                RUnit u = null;
                while (u == null && !stop) {
                    u = free.poll(100, TimeUnit.MILLISECONDS);
                }
                if (u == null) {
                    break;
                }
                issue(u, offsets[i], lengths[i], reads[i]);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (free.size() < units.length && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            mainEndNs = System.nanoTime();
            finishUnit();
        }
    }

    private void issue(RUnit u, long offset, int length, boolean read) {
        u.isRead = read;
        u.length = length;
        MemorySegment data = u.buffer.asSlice(0, length);
        CompletableFuture<Void> f;
        u.t0 = System.nanoTime();
        try {
            f = read ? dev.read(offset, data) : dev.write(offset, data, false);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        u.t1 = System.nanoTime();
        f.whenComplete((v, e) -> {
            long t2 = System.nanoTime();
            if (e != null) {
                fail(e);
            } else if (u.t0 - rampEndNs >= 0) {
                (u.isRead ? u.read : u.write).record(u.t1 - u.t0, t2 - u.t1, u.length);
                (u.isRead ? readOps : writeOps).increment();
                (u.isRead ? readBytes : writeBytes).add(u.length);
            }
            free.add(u);
        });
    }

    @Override
    void release() {
        for (RUnit u : units) {
            dev.freeBuffer(u.buffer);
        }
    }
}
