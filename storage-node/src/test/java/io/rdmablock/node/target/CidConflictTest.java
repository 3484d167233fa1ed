package io.rdmablock.node.target;

import io.rdmablock.node.store.StoreFaults;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Case C9, node side: the node never sends two completions for one command. A host that reuses a command id while
 * the command is still outstanding gets Command ID Conflict for the second capsule (NVMe base spec 2.0 section
 * 3.3.3.1); the outstanding command is completed exactly once, and the cid is free again after its completion.
 */
class CidConflictTest extends TargetTestBase {
    static final long STALL_OFFSET = 1L << 20;
    static final long STALL_NS = TimeUnit.MILLISECONDS.toNanos(1500);

    @BeforeEach
    void setUp() {
        f.store.setFaults(StoreFaults.stall("vol1", STALL_OFFSET, STALL_NS, 1));
        connect(TargetFixture.HOSTNQN, 0);
    }

    @Test
    void shouldAnswerAReusedOutstandingCidWithConflictAndCompleteTheOriginalOnce() {
        io.data().asSlice(0, 4096).fill((byte) 0x3C);
        io.rw(0, Opcodes.IO_WRITE, 77, STALL_OFFSET / LBA, 8, false, 0, 4096); // held by the store
        io.post(0, 64);
        assertNull(io.await(200 * MS), "the stalled write must not complete yet");

        io.rw(1, Opcodes.IO_READ, 77, 0, 8, false, 8192, 4096); // same cid while 77 is outstanding
        io.post(1, 64);
        io.awaitAnswer(2000 * MS, 77, NvmeStatus.generic(NvmeStatus.SC_CID_CONFLICT), "the duplicate is answered at once");

        List<RawHost.Cqe> later = new ArrayList<>();
        long deadline = System.nanoTime() + STALL_NS + 3000 * MS;
        while (System.nanoTime() < deadline) {
            RawHost.Cqe c = io.await(100 * MS);
            if (c != null) {
                later.add(c);
            } else if (!later.isEmpty()) {
                break;
            }
        }
        assertNull(io.await(500 * MS), "no further completion after the original's");
        assertEquals(1, later.size(), "exactly one completion for the stalled write: " + later);
        assertEquals(77, later.get(0).cid());
        assertEquals(0, later.get(0).status(), NvmeStatus.describe(later.get(0).status()));

        // the cid is free again: a read with cid 77 returns the stalled write's data
        io.data().asSlice(8192, 4096).fill((byte) 0);
        RawHost.Cqe read = io.readBlocks(0, 77, STALL_OFFSET / LBA);
        assertEquals(0, read.status(), NvmeStatus.describe(read.status()));
        assertEquals(-1, io.data().asSlice(8192, 4096).mismatch(io.data().asSlice(0, 4096)), "stalled write data");
    }
}
