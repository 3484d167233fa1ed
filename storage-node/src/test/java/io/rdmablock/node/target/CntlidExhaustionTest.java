package io.rdmablock.node.target;

import io.rdmablock.node.store.StoreFaults;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The attack: while a host's reconnect waits for its previous association to drain (case C8 fence; the old one has
 * a write held 2 s by the store), another host takes the last free cntlid of the subsystem (range 1..2). When the
 * fenced Connect runs again there is no cntlid left. Before the fix that threw out of the queue's housekeeping and
 * killed its poller thread, tearing down every other host's queue on it, while the acceptor kept handing new queues
 * to the dead poller. Expected: the reconnect is answered Connect Controller Busy (DNR), the poller (one, so every
 * queue is on it) keeps serving the other hosts' queues and takes new ones.
 */
class CntlidExhaustionTest {
    private static final String HOST_A = TargetFixture.HOSTNQN;
    private static final String HOST_B = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-00000000000b";
    private static final String HOST_C = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-00000000000c";
    private static final long STALL_OFFSET = 1L << 20;

    /** Connect Controller Busy, DNR (SCT 1, SC 81h). */
    private static final int CONTROLLER_BUSY = NvmeStatus.of(NvmeStatus.SCT_COMMAND_SPECIFIC,
            NvmeStatus.SC_CONNECT_CONTROLLER_BUSY, true);

    @TempDir
    Path dir;
    private TargetFixture f;

    @AfterEach
    void tearDown() {
        if (f != null) {
            f.close();
        }
    }

    @Test
    @Timeout(60)
    void shouldAnswerControllerBusyAndKeepThePollerServingWhenAFencedReconnectFindsNoCntlid() throws Exception {
        f = new TargetFixture(dir, TargetOptions.defaults().withPollers(1), 64L << 20, 512, Set.of("*"));
        f.target.cntlidRange(1, 2);
        Poller poller = f.target.pollers().get(0);
        StoreFaults stall = StoreFaults.stall("vol1", STALL_OFFSET, 2_000_000_000L, 1);
        f.store.setFaults(stall);
        try (RawHost oldAdmin = f.connect(0, 32, f.subnqn, HOST_A, 0xFFFF, 0);
             RawHost oldIo = f.connect(1, 8, f.subnqn, HOST_A, TargetFixture.cntlid(oldAdmin), 0);
             RawHost adminB = f.connect(0, 32, f.subnqn, HOST_B, 0xFFFF, 0);
             RawHost reconnect = f.host(0, 32)) {
            assertEquals(2, TargetFixture.cntlid(adminB));
            oldIo.rw(0, Opcodes.IO_WRITE, 41, STALL_OFFSET / 512, 8, false, 0, 4096);
            oldIo.post(0, SqeDescriptor.LENGTH); // held 2 s by the store
            awaitTrue(() -> stall.remaining() == 0, "host A's write held in the store");
            // host A reconnects (same hostnqn and HOSTID): its old controller 1 is destroyed, the Connect waits
            reconnect.connectCapsule(1, 31, 0, f.subnqn, HOST_A, 0xFFFF, 0);
            reconnect.post(0, SqeDescriptor.LENGTH);
            awaitTrue(() -> f.target.controllerCount() == 1, "host A's old controller destroyed by the fence");
            // host C takes cntlid 1 meanwhile: the subsystem's range is full again
            try (RawHost adminC = f.connect(0, 32, f.subnqn, HOST_C, 0xFFFF, 0)) {
                assertEquals(1, TargetFixture.cntlid(adminC));
                RawHost.Cqe answer = reconnect.await(10_000_000_000L);
                assertNotNull(answer, "the fenced reconnect is answered");
                assertEquals(CONTROLLER_BUSY, answer.status(), NvmeStatus.describe(answer.status()));
                assertEquals(1, f.metrics.connectRefusals("noFreeCntlid"));
                // the poller still serves B and C, and takes new queues
                assertFalse(poller.isDead(), "the poller survived");
                assertSame(poller, f.target.pollers().get(0), "the poller was not replaced");
                assertEquals(0, adminB.exec(adminB.keepAlive(0, 5)).status(), "host B's admin queue answers");
                assertEquals(0, adminC.exec(adminC.keepAlive(0, 6)).status(), "host C's admin queue answers");
                try (RawHost ioB = f.connect(1, 8, f.subnqn, HOST_B, 2, 0)) {
                    assertEquals(0, ioB.readBlocks(0, 7, 0).status(), "a new I/O queue is served");
                }
                assertEquals(2, f.target.controllerCount());
            }
        }
    }

    private static void awaitTrue(BooleanSupplier c, String what) {
        Await.until(c, Duration.ofSeconds(10), what);
    }
}
