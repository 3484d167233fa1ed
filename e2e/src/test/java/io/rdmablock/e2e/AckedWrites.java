package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Verified writes with a model of acknowledged writes: {@code lanes} threads, each owning a disjoint region of the
 * volume (so no two writes in flight overlap), write 1..8 blocks of 4 KiB at random places of their region; every
 * block carries a stamp (write id and block index) repeated over its 4 KiB. A write is recorded in the model only
 * once acknowledged; a write that failed leaves its blocks "either" (old or new value) until rewritten.
 * {@link #check} compares any copy (read through a node, or a data file) with the model.
 */
final class AckedWrites {
    static final int BLOCK = 4096;
    private final int lanes;
    private final long blocksPerLane;
    /** Acknowledged stamp per block, 0 = never written (reads zeroes). */
    private final AtomicLongArray acked;
    /** Stamp of a failed write per block (may or may not have landed), 0 = none. */
    private final AtomicLongArray maybe;
    private final AtomicLong writeIds = new AtomicLong(1);
    final AtomicLong ackedCount = new AtomicLong();
    final AtomicLong failedCount = new AtomicLong();
    final AtomicLong lastAckNs = new AtomicLong();
    private volatile Throwable firstFailure;

    AckedWrites(long volumeBytes, int lanes) {
        this.lanes = lanes;
        long blocks = volumeBytes / BLOCK;
        this.blocksPerLane = blocks / lanes;
        this.acked = new AtomicLongArray((int) blocks);
        this.maybe = new AtomicLongArray((int) blocks);
    }

    static long stamp(long writeId, long block) {
        return writeId * 1_000_003L + block + 1;
    }

    Throwable firstFailure() {
        return firstFailure;
    }

    /** Runs the lanes until {@code stop} returns true or {@code maxWrites} per lane are done; bounded. */
    void run(BlockDevice dev, java.util.function.BooleanSupplier stop, int maxWrites) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (int lane = 0; lane < lanes; lane++) {
            int l = lane;
            Thread t = new Thread(() -> lane(dev, l, stop, maxWrites), "writer-" + lane);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join(300_000);
        }
    }

    private void lane(BlockDevice dev, int lane, java.util.function.BooleanSupplier stop, int maxWrites) {
        Random rnd = new Random(lane * 7919L);
        MemorySegment buf = dev.allocateBuffer(8 * BLOCK);
        try {
            for (int i = 0; i < maxWrites && !stop.getAsBoolean(); i++) {
                int n = 1 + rnd.nextInt(8);
                long first = lane * blocksPerLane + rnd.nextLong(blocksPerLane - n + 1);
                long id = writeIds.getAndIncrement();
                for (int b = 0; b < n; b++) {
                    long s = stamp(id, first + b);
                    for (int w = 0; w < BLOCK / 8; w++) {
                        buf.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, (long) b * BLOCK / 8 + w, s);
                    }
                }
                try {
                    dev.writeSync(first * BLOCK, buf.asSlice(0, (long) n * BLOCK), false);
                    for (int b = 0; b < n; b++) {
                        acked.set((int) (first + b), stamp(id, first + b));
                        maybe.set((int) (first + b), 0);
                    }
                    ackedCount.incrementAndGet();
                    lastAckNs.set(System.nanoTime());
                } catch (RuntimeException e) {
                    for (int b = 0; b < n; b++) {
                        maybe.set((int) (first + b), stamp(id, first + b));
                    }
                    failedCount.incrementAndGet();
                    if (firstFailure == null) {
                        firstFailure = e;
                    }
                }
            }
        } finally {
            dev.freeBuffer(buf);
        }
    }

    /** Reads every lane region through {@code dev} and checks it; returns the first mismatch or null. */
    String checkDevice(BlockDevice dev) {
        MemorySegment buf = dev.allocateBuffer(64 * BLOCK);
        try {
            long total = blocksPerLane * lanes;
            for (long b = 0; b < total; b += 64) {
                int n = (int) Math.min(64, total - b);
                dev.readSync(b * BLOCK, buf.asSlice(0, (long) n * BLOCK));
                for (int i = 0; i < n; i++) {
                    String m = checkBlock(b + i, buf.asSlice((long) i * BLOCK, BLOCK).asByteBuffer()
                            .order(ByteOrder.nativeOrder()));
                    if (m != null) {
                        return "through the node: " + m;
                    }
                }
            }
            return null;
        } finally {
            dev.freeBuffer(buf);
        }
    }

    /** Checks a copy's data file directly (its node stopped or killed); returns the first mismatch or null. */
    String checkFile(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer bb = ByteBuffer.allocateDirect(BLOCK).order(ByteOrder.nativeOrder());
            long total = blocksPerLane * lanes;
            for (long b = 0; b < total; b++) {
                bb.clear();
                while (bb.hasRemaining() && ch.read(bb, b * BLOCK + bb.position()) > 0) {
                    // read the whole block
                }
                while (bb.hasRemaining()) {
                    bb.put((byte) 0); // beyond the end of a sparse file: zeroes
                }
                bb.flip();
                String m = checkBlock(b, bb);
                if (m != null) {
                    return file + ": " + m;
                }
            }
            return null;
        }
    }

    private String checkBlock(long block, ByteBuffer data) {
        long want = acked.get((int) block);
        long alt = maybe.get((int) block);
        long first = data.getLong(0);
        if (first != want && (alt == 0 || first != alt)) {
            return "block " + block + ": stamp " + first + ", acknowledged " + want + (alt != 0 ? " or " + alt : "");
        }
        for (int w = 1; w < BLOCK / 8; w++) {
            if (data.getLong(w * 8) != first) {
                return "block " + block + ": torn at byte " + w * 8;
            }
        }
        return null;
    }
}
