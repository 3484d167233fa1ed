package io.rdmablock.initiator;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Checks shared by the fake-target tests and the end-to-end tests against the storage node. Part of the initiator's
 * test-jar, public for tests in other modules (the e2e module); they reach the device through its public API only.
 */
public final class DeviceChecks {
    private DeviceChecks() {
    }

    /** Fills {@code s} with pseudo-random longs from {@code seed} (the same seed gives the same bytes); returns it. */
    public static MemorySegment pattern(MemorySegment s, long seed) {
        java.util.Random r = new java.util.Random(seed);
        for (long i = 0; i < s.byteSize(); i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        return s;
    }

    /** The 8-byte word at byte {@code i} of block {@code block} written with {@code version}. */
    public static long word(long block, int version, long i) {
        long x = block * 0x9E3779B97F4A7C15L ^ (long) version << 32 ^ i;
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        return x;
    }

    public static void fill(MemorySegment buf, long firstBlock, int blockBytes, int[] versions, int versionBase) {
        for (long off = 0; off < buf.byteSize(); off += 8) {
            long b = firstBlock + off / blockBytes;
            buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off, word(b, versions[(int) (b - versionBase)], off % blockBytes));
        }
    }

    /** Returns null when every block matches its model version (0 = never written, reads zero), else a message. */
    public static String verify(MemorySegment buf, long firstBlock, int blockBytes, int[] versions, int versionBase) {
        for (long off = 0; off < buf.byteSize(); off += 8) {
            long b = firstBlock + off / blockBytes;
            int v = versions[(int) (b - versionBase)];
            long expect = v == 0 ? 0 : word(b, v, off % blockBytes);
            long got = buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
            if (got != expect) {
                return "block " + b + " (version " + v + ") differs at byte " + off % blockBytes;
            }
        }
        return null;
    }

    /**
     * Random reads and writes (4 KiB .. 256 KiB, some above MDTS) at queue depth {@code qd}, from {@code threads}
     * application threads, each slot owning a disjoint region so the model is exact; every read is verified against
     * the model. The region starts zeroed (Write Zeroes first). Bounded by {@code maxOps} and {@code maxMs}; the final
     * read-back covers what was written (and each slot's first 256 KiB), so the run scales with the measured rate.
     *
     * @return operations done
     */
    public static long randomVerifiedLoad(BlockDevice dev, long regionStart, long regionBytes, int threads, int qd,
                                   long maxOps, long maxMs, long seed) throws Exception {
        int blockBytes = 4096;
        int slotsTotal = threads * qd;
        long perSlot = regionBytes / slotsTotal / blockBytes * blockBytes;
        assertTrue(perSlot >= 256 * 1024, "region too small for " + slotsTotal + " slots");
        dev.writeZeroesSync(regionStart, perSlot * slotsTotal);
        AtomicLong ops = new AtomicLong();
        AtomicReference<String> failure = new AtomicReference<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMs);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int tid = t;
            ts.add(Thread.ofPlatform().name("load-" + t).start(() -> {
                SplittableRandom rnd = new SplittableRandom(seed + tid);
                MemorySegment[] bufs = new MemorySegment[qd];
                @SuppressWarnings("unchecked")
                CompletableFuture<Void>[] fs = new CompletableFuture[qd];
                boolean[] isRead = new boolean[qd];
                long[] lens = new long[qd];
                long[] firstBlock = new long[qd];
                int[][] versions = new int[qd][];
                int[] base = new int[qd];
                try {
                    for (int s = 0; s < qd; s++) {
                        bufs[s] = dev.allocateBuffer(256 * 1024);
                        long start = regionStart + (long) (tid * qd + s) * perSlot;
                        base[s] = (int) (start / blockBytes);
                        versions[s] = new int[(int) (perSlot / blockBytes)];
                    }
                    int s = 0;
                    while (failure.get() == null && ops.get() < maxOps && System.nanoTime() < deadline) {
                        if (fs[s] != null) {
                            fs[s].get(30, TimeUnit.SECONDS);
                            if (isRead[s]) {
                                String bad = verify(bufs[s].asSlice(0, lens[s]), firstBlock[s], blockBytes, versions[s], base[s]);
                                if (bad != null) {
                                    failure.compareAndSet(null, "thread " + tid + " slot " + s + ": " + bad);
                                    break;
                                }
                            }
                            ops.incrementAndGet();
                        }
                        int blocks = rnd.nextInt(10) == 0 ? 64 : 1 + rnd.nextInt(16);
                        int slotBlocks = versions[s].length;
                        int at = rnd.nextInt(slotBlocks - blocks + 1);
                        long fb = base[s] + at;
                        MemorySegment buf = bufs[s].asSlice(0, (long) blocks * blockBytes);
                        firstBlock[s] = fb;
                        lens[s] = buf.byteSize();
                        if (rnd.nextBoolean()) {
                            for (int b = 0; b < blocks; b++) {
                                versions[s][at + b]++;
                            }
                            fill(buf, fb, blockBytes, versions[s], base[s]);
                            isRead[s] = false;
                            fs[s] = dev.write(fb * blockBytes, buf, rnd.nextInt(8) == 0);
                        } else {
                            isRead[s] = true;
                            fs[s] = dev.read(fb * blockBytes, buf);
                        }
                        s = (s + 1) % qd;
                    }
                    for (int k = 0; k < qd; k++) {
                        if (fs[k] != null) {
                            fs[k].get(30, TimeUnit.SECONDS);
                            if (isRead[k] && failure.get() == null) {
                                String bad = verify(bufs[k].asSlice(0, lens[k]), firstBlock[k], blockBytes,
                                        versions[k], base[k]);
                                if (bad != null) {
                                    failure.compareAndSet(null, "thread " + tid + " slot " + k + ": " + bad);
                                }
                            }
                        }
                    }
                    // final read-back of every slot region: each 256 KiB chunk written to, and the first chunk
                    // of each slot whatever it holds (zeroes, or data), so the work is proportional to the I/O the
                    // time bound allowed, not to the region's size (a loaded TCG guest reads ~20 MiB/s)
                    for (int k = 0; k < qd && failure.get() == null; k++) {
                        long start = (long) base[k] * blockBytes;
                        for (long off = 0; off < perSlot; off += 256 * 1024) {
                            long n = Math.min(256 * 1024, perSlot - off);
                            if (off > 0 && !written(versions[k], (int) (off / blockBytes), (int) (n / blockBytes))) {
                                continue;
                            }
                            MemorySegment buf = bufs[k].asSlice(0, n);
                            dev.readSync(start + off, buf);
                            String bad = verify(buf, (start + off) / blockBytes, blockBytes, versions[k], base[k]);
                            if (bad != null) {
                                failure.compareAndSet(null, "final read-back, thread " + tid + " slot " + k + ": " + bad);
                                break;
                            }
                        }
                    }
                } catch (Exception e) {
                    failure.compareAndSet(null, "thread " + tid + ": " + e);
                } finally {
                    for (MemorySegment b : bufs) {
                        if (b != null) {
                            dev.freeBuffer(b);
                        }
                    }
                }
            }));
        }
        for (Thread t : ts) {
            t.join(maxMs + 120_000);
        }
        assertNull(failure.get());
        return ops.get();
    }

    private static boolean written(int[] versions, int from, int count) {
        for (int i = from; i < from + count; i++) {
            if (versions[i] != 0) {
                return true;
            }
        }
        return false;
    }

    /** Case C3: with N entries per queue, N-1, N and N+1 I/Os submitted at once right after attach all complete. */
    public static void submitBurst(BlockDevice dev, int count) throws Exception {
        MemorySegment b = dev.allocateBuffer(4096L * count);
        List<CompletableFuture<Void>> fs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            fs.add(dev.write(i * 4096L, b.asSlice(i * 4096L, 4096), false));
        }
        for (CompletableFuture<Void> f : fs) {
            f.get(30, TimeUnit.SECONDS);
        }
        assertEquals(count, fs.stream().filter(f -> f.isDone() && !f.isCompletedExceptionally()).count());
        dev.freeBuffer(b);
    }
}
