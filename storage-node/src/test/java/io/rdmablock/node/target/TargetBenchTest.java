package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Rough throughput of the target on the soft provider: 4 KiB random reads then writes at QD 31 on one I/O queue
 * from a raw host in the same JVM (so host, target, soft transport and store share the CPUs). Runs only with
 * {@code -Drdmablock.bench=true}; {@code -Drdmablock.bench.seconds=N} (default 5 per pattern).
 */
class TargetBenchTest {
    @TempDir
    Path dir;

    @Test
    void measureRandom4kQd31() {
        assumeTrue(Boolean.getBoolean("rdmablock.bench"), "benchmark: run with -Drdmablock.bench=true");
        long seconds = Long.getLong("rdmablock.bench.seconds", 5);
        try (TargetFixture f = new TargetFixture(dir, TargetOptions.defaults(), 256L << 20, 4096, java.util.Set.of("*"));
             RawHost admin = f.admin(0)) {
            assertEquals(0, admin.identify(Opcodes.CNS_CONTROLLER, 0).status());
            int cntlid = IdentifyControllerDescriptor.decode(admin.data()).cntlid();
            try (RawHost io = f.io(cntlid, 1, 32)) {
                for (int op : new int[]{Opcodes.IO_WRITE, Opcodes.IO_READ, Opcodes.IO_WRITE}) {
                    run(f, io, op, seconds);
                }
            }
        }
    }

    private static void run(TargetFixture f, RawHost io, int opcode, long seconds) {
        int qd = 31;
        long blocks = f.volume.blockCount();
        SplittableRandom rnd = new SplittableRandom(1);
        long cpu0 = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
        long t0 = System.nanoTime();
        long end = t0 + seconds * 1_000_000_000L;
        for (int slot = 0; slot < qd; slot++) {
            io.rw(slot, opcode, slot, rnd.nextLong(blocks), 1, false, slot * 4096L, 4096);
            io.post(slot, SqeDescriptor.LENGTH);
        }
        long done = 0;
        int outstanding = qd;
        while (outstanding > 0) {
            RawHost.Cqe c = io.await();
            assertNotNull(c, "response");
            assertTrue(c.ok(), "status " + c);
            done++;
            outstanding--;
            if (System.nanoTime() < end) {
                int slot = c.cid();
                io.rw(slot, opcode, slot, rnd.nextLong(blocks), 1, false, slot * 4096L, 4096);
                io.post(slot, SqeDescriptor.LENGTH);
                outstanding++;
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        long cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime() - cpu0;
        System.out.printf("bench %s 4KiB random QD%d: %.0f IOPS, %.1f us CPU per I/O (host + target + store, one JVM),"
                        + " store backend %s%n", opcode == Opcodes.IO_READ ? "read" : "write", qd, done / secs,
                cpu / 1e3 / done, f.store.backend());
    }
}
