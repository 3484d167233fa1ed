package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A subsystem in secondary mode (docs/replication.md, "Wire"): only the primary node's host NQN is admitted, and
 * write-type commands carry the primary's epoch in CDW2-3: 0 is Invalid Field, one below the highest accepted is
 * Reservation Conflict with nothing written, a higher one is persisted before the command executes.
 */
class SecondaryModeTest extends TargetTestBase {
    static final String PRIMARY = "nqn.2026-11.io.rdmablock:node:primary-1";
    static final int INVALID_FIELD = NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD);
    static final int RESERVATION_CONFLICT = NvmeStatus.generic(0x83);
    static final long SLBA = 64;

    @BeforeEach
    void setUp() {
        f.target.subsystemOfVolume("vol1").secondaryOf(PRIMARY);
        connect(PRIMARY, 0);
    }

    /** WRITE of 8 blocks filled with {@code fill} at SLBA, carrying {@code epoch} in CDW2-3. */
    private int write(int cid, int fill, long epoch) {
        return io.writeBlocks(cid, SLBA, fill, epoch).status();
    }

    /** READ of the 8 blocks at SLBA (no epoch), asserting success; every byte must be {@code fill}. */
    private void assertReads(int fill, String what) {
        io.data().asSlice(8192, 4096).fill((byte) 0);
        RawHost.Cqe r = io.readBlocks(0, 99, SLBA);
        assertEquals(0, r.status(), "READ without an epoch is served: " + NvmeStatus.describe(r.status()));
        byte[] got = io.data().asSlice(8192, 4096).toArray(ValueLayout.JAVA_BYTE);
        for (int i = 0; i < got.length; i++) {
            assertEquals((byte) fill, got[i], what + ": byte " + i);
        }
    }

    @Test
    void shouldExecuteAWriteWithANewEpochAndFenceOneWithAnOlderEpoch() {
        assertEquals(0, write(1, 0x55, 5), "epoch 5 (new) is accepted");
        assertReads(0x55, "the epoch 5 write landed");
        assertEquals(5, f.store.epoch("vol1"));

        int s = write(2, 0x33, 3);
        assertEquals(RESERVATION_CONFLICT, s, "epoch 3 < 5: " + NvmeStatus.describe(s));
        assertReads(0x55, "the fenced epoch 3 write touched nothing");
        assertEquals(5, f.store.epoch("vol1"), "a fenced epoch does not lower the accepted one");

        assertEquals(0, write(3, 0x66, 5), "the same epoch again is accepted");
        assertReads(0x66, "the second epoch 5 write landed");
    }

    @Test
    void shouldAnswerInvalidFieldToAWriteTypeCommandWithoutEpoch() {
        int s = write(1, 0x77, 0);
        assertEquals(INVALID_FIELD, s, NvmeStatus.describe(s));
        assertReads(0x00, "the write without epoch touched nothing");
        RawHost.Cqe flush = io.exec(io.nullSglCommand(0, Opcodes.IO_FLUSH, 2, 1));
        assertEquals(INVALID_FIELD, flush.status(), "FLUSH without epoch: " + NvmeStatus.describe(flush.status()));
        MemorySegment c = io.nullSglCommand(0, Opcodes.IO_FLUSH, 3, 1);
        SqeDescriptor.cdw23(c, 1L << 32); // epoch in CDW3 only: 2^32
        assertEquals(0, io.exec(c).status(), "FLUSH with an epoch in CDW3");
        assertEquals(1L << 32, f.store.epoch("vol1"), "CDW3 holds bits 63:32");
    }

    @Test
    void shouldKeepTheAcceptedEpochAcrossANodeRestart() {
        assertEquals(0, write(1, 0x77, 7));
        disconnect();
        f.close();

        f = TargetFixture.reopen(dir);
        f.target.subsystemOfVolume("vol1").secondaryOf(PRIMARY);
        connect(PRIMARY, 0);
        int s = write(2, 0x66, 6);
        assertEquals(RESERVATION_CONFLICT, s, "epoch 6 < persisted 7: " + NvmeStatus.describe(s));
        assertReads(0x77, "the fenced write after the restart touched nothing");
    }

    /** A secondary admits the allow-listed hosts and the primary node (docs/failover.md); no one else. */
    @Test
    void shouldRefuseAConnectFromAHostNeitherAllowListedNorThePrimary() {
        f.store.setAllowedHosts("vol1", java.util.Set.of("nqn.2014-08.org.nvmexpress:uuid:someone-else"));
        try (RawHost other = f.host(0, 32)) {
            RawHost.Cqe c = other.fabricConnect(31, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF);
            assertEquals(NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_HOST), c.status(),
                    NvmeStatus.describe(c.status()));
        }
    }

    @Test
    void shouldIgnoreCdw2And3InPlainModeAndEndTheSecondaryAssociationsOnTheModeChange() throws Exception {
        f.target.subsystemOfVolume("vol1").plain();
        Await.until(() -> f.target.connectedHosts("vol1").isEmpty(), Duration.ofNanos(RawHost.TIMEOUT_NS),
                "the mode change ended the primary's association");
        disconnect();
        connect(TargetFixture.HOSTNQN, 0);
        assertEquals(0, write(1, 0x11, 9));
        assertEquals(0, write(2, 0x22, 1), "plain mode: CDW2-3 ignored");
        assertEquals(0, write(3, 0x33, 0));
        assertReads(0x33, "every write landed");
        assertEquals(0, f.store.epoch("vol1"), "plain mode persists no epoch");
    }
}
