package io.rdmablock.initiator.bench;

import io.rdmablock.initiator.BlockDevice;
import java.io.BufferedReader;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Replays a block trace ({@code --replay=FILE}): lines {@code time_ms device start_sector size_sectors rw} with 512-byte
 * sectors and rw 1 = read, 0 = write (the SNIA MSN file-server format used by the quickstart). Offsets are folded into
 * the device: {@code offset = (sector * 512) mod capacity}, aligned down to the LBA size, moved back so the request
 * ends inside the device; lengths are rounded up to the LBA size and capped at {@link #MAX_REQUEST_BYTES}.
 *
 * <p>A dispatcher thread issues each request at its timestamp (scaled by {@code timeScalePercent}, or as fast as
 * possible with {@code noStall}) on one of {@code iodepth} units; when every unit is busy the request waits (the
 * stall is visible as latency in the trace's time base being stretched). Stops at the end of the trace or after
 * {@code runtime}.
 */
final class ReplayWorker extends Job {
    static final int MAX_REQUEST_BYTES = 4 << 20;

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

    ReplayWorker(JobSpec spec, BlockDevice dev, Path trace, boolean noStall, int timeScalePercent) throws IOException {
        super(spec, "replay", 1);
        this.dev = dev;
        this.noStall = noStall;
        this.timeScalePercent = timeScalePercent;
        long cap = dev.capacityBytes();
        int lba = dev.lbaSize();
        int n = 0;
        long[] t = new long[1 << 16];
        long[] o = new long[t.length];
        int[] l = new int[t.length];
        boolean[] r = new boolean[t.length];
        int maxLen = lba;
        try (BufferedReader in = Files.newBufferedReader(trace)) {
            String line;
            int lineNo = 0;
            while ((line = in.readLine()) != null) {
                lineNo++;
                String s = line.strip();
                if (s.isEmpty() || s.startsWith("#")) {
                    continue;
                }
                String[] f = s.split("\\s+");
                if (f.length < 5) {
                    throw new IllegalArgumentException("invalid trace: " + trace + " line " + lineNo
                            + ": want 'time_ms device start_sector size_sectors rw', got '" + s + "'");
                }
                if (n == t.length) {
                    t = java.util.Arrays.copyOf(t, n * 2);
                    o = java.util.Arrays.copyOf(o, n * 2);
                    l = java.util.Arrays.copyOf(l, n * 2);
                    r = java.util.Arrays.copyOf(r, n * 2);
                }
                try {
                    t[n] = Math.round(Double.parseDouble(f[0]) * 1_000_000);
                    long sector = Long.parseLong(f[2]);
                    long bytes = Long.parseLong(f[3]) * 512;
                    long len = Math.min(Math.min((bytes + lba - 1) / lba * lba, MAX_REQUEST_BYTES), cap / lba * lba);
                    len = Math.max(len, lba);
                    long off = Math.floorMod(sector * 512, cap) / lba * lba;
                    if (off + len > cap) {
                        off = cap - len;
                    }
                    o[n] = off;
                    l[n] = (int) len;
                    r[n] = Integer.parseInt(f[4]) == 1;
                    maxLen = Math.max(maxLen, (int) len);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("invalid trace: " + trace + " line " + lineNo + ": " + e.getMessage());
                }
                n++;
            }
        }
        if (n == 0) {
            throw new IllegalArgumentException("invalid trace: " + trace + " has no requests");
        }
        this.count = n;
        this.timeNs = t;
        this.offsets = o;
        this.lengths = l;
        this.reads = r;
        this.free = new ArrayBlockingQueue<>(spec.iodepth);
        this.units = new RUnit[spec.iodepth];
        for (int i = 0; i < units.length; i++) {
            units[i] = new RUnit(dev.allocateBuffer(maxLen));
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
                if (!noStall) {
                    long due = startNs + (timeNs[i] - t0) * timeScalePercent / 100;
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
