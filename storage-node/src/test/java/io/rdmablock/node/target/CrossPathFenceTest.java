package io.rdmablock.node.target;

import io.rdmablock.node.store.StoreFaults;
import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Case C8: WRITE A to LBA X stalls in the backend on the host's first association (path 1); the host gives up on
 * it, connects a new association (path 2) and writes B to X there; then the stall is released. The node must not
 * acknowledge path 2's Connect before path 1's stalled write has drained, so A can never land after B: a later
 * READ of X returns B.
 */
class CrossPathFenceTest extends TargetTestBase {
    static final long X = 1L << 20;
    static final long STALL_NS = TimeUnit.MILLISECONDS.toNanos(2000);

    @BeforeEach
    void setUp() {
        f.store.setFaults(StoreFaults.stall("vol1", X, STALL_NS, 1));
        connect(TargetFixture.HOSTNQN, 0); // path 1
    }

    /** Path 1 writes A (0xAA) to LBA X; the store holds it for STALL_NS. Returns when it was posted (nanoTime). */
    private long postStalledWriteA() {
        io.data().asSlice(0, 4096).fill((byte) 0xAA);
        long postedNs = System.nanoTime();
        io.rw(0, Opcodes.IO_WRITE, 1, X / LBA, 8, false, 0, 4096);
        io.post(0, 64);
        assertNull(io.await(200 * MS), "write A is stalled in the backend");
        return postedNs;
    }

    @Test
    void shouldNotLetAStalledWriteOfTheOldPathLandAfterTheNewPathsWrite() {
        long postedNs = postStalledWriteA();

        // path 2: a new association of the same host (same hostnqn and HOSTID)
        try (RawHost admin2 = f.admin(0)) {
            long connectedAfterMs = (System.nanoTime() - postedNs) / MS;
            assertTrue(connectedAfterMs >= STALL_NS / MS - 100,
                    "path 2 acknowledged after " + connectedAfterMs + " ms, before path 1's write drained");
            try (RawHost io2 = f.io(TargetFixture.cntlid(admin2), 1, 8)) {
                RawHost.Cqe b = io2.writeBlocks(2, X / LBA, 0xBB, 0); // B
                assertEquals(0, b.status(), NvmeStatus.describe(b.status()));
                io2.data().asSlice(8192, 4096).fill((byte) 0);
                RawHost.Cqe r = io2.readBlocks(0, 3, X / LBA);
                assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
                for (long i = 0; i < 4096; i++) {
                    assertEquals((byte) 0xBB, io2.data().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 8192 + i),
                            "byte " + i + " of LBA X reads B");
                }
            }
        }
    }

    @Test
    void shouldAnswerASecondConnectAfterTheFirstThatWaitedForTheFence() {
        postStalledWriteA();

        try (RawHost admin2 = f.host(0, 32)) {
            var first = admin2.connectCapsule(1, 31, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0);
            java.lang.foreign.MemorySegment again = admin2.capsule(1);
            again.copyFrom(first);
            SqeDescriptor.cid(again, 2); // a second Connect on the same queue, same data
            admin2.post(0, 64);
            assertNull(admin2.await(300 * MS), "the first Connect waits for path 1 to drain");
            // a pending queue has one RECV (its Connect slot) until a Connect succeeds: the second capsule waits
            // (RNR, the host's QP retries) until the first is answered, then lands on the connected queue
            admin2.post(1, 64);
            admin2.awaitAnswer(STALL_NS + 5000 * MS, 1, 0, "the first Connect completes once path 1 drained");
            admin2.awaitAnswer(2000 * MS, 2, NvmeStatus.generic(NvmeStatus.SC_COMMAND_SEQUENCE_ERROR),
                    "the second Connect, on a connected queue, is a Command Sequence Error");
        }
    }

    @Test
    void shouldFenceTheDeadAssociationOfARestartedHostProcessWithANewHostId() {
        long postedNs = postStalledWriteA();
        disconnect(); // the host process dies: its queues disconnect, the stalled write is still in the backend

        try (RawHost admin2 = f.host(0, 32)) { // restarted process: same hostnqn, new HOSTID
            var c = admin2.connectCapsule(2, 31, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0);
            admin2.data().asSlice(ConnectDataDescriptor.HOSTID_OFFSET, 16).fill((byte) 7);
            RawHost.Cqe connected = admin2.exec(c);
            assertEquals(0, connected.status(), NvmeStatus.describe(connected.status()));
            long connectedAfterMs = (System.nanoTime() - postedNs) / MS;
            assertTrue(connectedAfterMs >= STALL_NS / MS - 100,
                    "new association acknowledged after " + connectedAfterMs + " ms, before the dead one drained");
        }
    }

}
