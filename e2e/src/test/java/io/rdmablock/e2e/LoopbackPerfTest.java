package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.node.StorageNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * 4 KiB random read / write IOPS at QD32 through the library against an in-process node on the test provider.
 * Opt-in: {@code mvn -pl initiator -am test -Dtest=LoopbackPerfTest -Drdmablock.perf=true
 * -Dsurefire.failIfNoSpecifiedTests=false}. Prints one line per run.
 */
@EnabledIfSystemProperty(named = "rdmablock.perf", matches = "true")
class LoopbackPerfTest {
    @TempDir
    Path dir;

    @Test
    void measureRandomFourKiBAtQd32() throws Exception {
        String provider = NodeFixtures.providers().findFirst().orElse("soft");
        long seconds = Long.getLong("rdmablock.perf.seconds", 5);
        try (StorageNode node = NodeFixtures.startNode(dir, provider, 0)) {
            node.createVolume("perf", 1L << 30, 4096, Set.of("*"));
            for (int queues : new int[]{1, 2}) {
                try (NvmeBlockDevice d = NodeFixtures.open(node, provider, "perf", DeviceOptions.defaults().ioQueues(queues))) {
                    MemorySegment fill = d.allocateBuffer(1 << 20);
                    for (long off = 0; off < (256L << 20); off += 1 << 20) { // preallocate the working set
                        d.writeSync(off, fill, false);
                    }
                    for (boolean write : new boolean[]{false, true}) {
                        double mibps = runSequential(d, write, 8, 1 << 20, 256L << 20, seconds);
                        System.out.printf("perf: provider=%s ioQueues=%d seq%s 1MiB QD8: %.0f MiB/s%n", provider,
                                queues, write ? "write" : "read", mibps);
                    }
                    for (boolean write : new boolean[]{false, true}) {
                        long cpu0 = pollerCpuNs();
                        long t0 = System.nanoTime();
                        double iops = run(d, write, 32, 256L << 20, seconds);
                        double ios = iops * (System.nanoTime() - t0) / 1e9;
                        double usPerIo = (pollerCpuNs() - cpu0) / 1e3 / Math.max(1, ios);
                        System.out.printf("perf: provider=%s ioQueues=%d %s 4KiB QD32: %.0f IOPS, initiator pollers "
                                + "%.1f us CPU/IO%n", provider, queues, write ? "randwrite" : "randread", iops, usPerIo);
                        assertTrue(iops > 0);
                    }
                }
            }
        }
    }

    static double run(BlockDevice d, boolean write, int qd, long span, long seconds) throws Exception {
        MemorySegment[] bufs = new MemorySegment[qd];
        @SuppressWarnings("unchecked")
        CompletableFuture<Void>[] fs = new CompletableFuture[qd];
        for (int i = 0; i < qd; i++) {
            bufs[i] = d.allocateBuffer(4096);
        }
        SplittableRandom rnd = new SplittableRandom(1);
        long blocks = span / 4096;
        long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        long end = warm + TimeUnit.SECONDS.toNanos(seconds);
        long ops = 0;
        int s = 0;
        long start = 0;
        while (true) {
            long now = System.nanoTime();
            if (start == 0 && now >= warm) {
                start = now;
                ops = 0;
            }
            if (now >= end) {
                break;
            }
            if (fs[s] != null) {
                fs[s].join();
                ops++;
            }
            long off = rnd.nextLong(blocks) * 4096;
            fs[s] = write ? d.write(off, bufs[s], false) : d.read(off, bufs[s]);
            s = (s + 1) % qd;
        }
        double secs = (System.nanoTime() - start) / 1e9;
        for (CompletableFuture<Void> f : fs) {
            if (f != null) {
                f.join();
            }
        }
        for (MemorySegment b : bufs) {
            d.freeBuffer(b);
        }
        return ops / secs;
    }

    static double runSequential(BlockDevice d, boolean write, int qd, int size, long span, long seconds) {
        MemorySegment[] bufs = new MemorySegment[qd];
        @SuppressWarnings("unchecked")
        CompletableFuture<Void>[] fs = new CompletableFuture[qd];
        for (int i = 0; i < qd; i++) {
            bufs[i] = d.allocateBuffer(size);
        }
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(seconds);
        long bytes = 0;
        long off = 0;
        int s = 0;
        while (System.nanoTime() < end) {
            if (fs[s] != null) {
                fs[s].join();
                bytes += size;
            }
            fs[s] = write ? d.write(off, bufs[s], false) : d.read(off, bufs[s]);
            off = (off + size) % span;
            s = (s + 1) % qd;
        }
        double secs = (System.nanoTime() - start) / 1e9;
        for (CompletableFuture<Void> f : fs) {
            if (f != null) {
                f.join();
            }
        }
        for (MemorySegment b : bufs) {
            d.freeBuffer(b);
        }
        return bytes / secs / (1 << 20);
    }

    /** CPU time of the initiator's poller threads (rdmablock-ioq-*), ns. */
    static long pollerCpuNs() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (java.lang.management.ThreadInfo ti : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (ti != null && ti.getThreadName().startsWith("rdmablock-ioq-")) {
                long t = mx.getThreadCpuTime(ti.getThreadId());
                if (t > 0) {
                    sum += t;
                }
            }
        }
        return sum;
    }
}
