package io.rdmablock.node.target;

import io.rdmablock.node.store.SnapshotInfo;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The secondary's side of a replicated snapshot's cut ({@link Opcodes#ADMIN_COPY_SNAPSHOT}, docs/snapshots.md
 * "Replicated volumes"): taken and deleted in the copy's store on the wire, a repeated take replaces the snapshot
 * of that id, and what is refused: a host that is not a peer node, bad fields, a deposed primary's epoch.
 */
class CopySnapshotCommandTest extends TargetTestBase {
    static final String PRIMARY = PeerLeaseGrantTest.PRIMARY;

    Subsystem s;
    final List<RawHost> hosts = new ArrayList<>();

    @BeforeEach
    void setUp() {
        s = f.target.subsystemOfVolume("vol1");
    }

    @AfterEach
    void tearDown() {
        TargetFixture.close(hosts.toArray(RawHost[]::new));
    }

    private RawHost admin(String hostnqn) {
        RawHost h = f.connect(0, 32, f.subnqn, hostnqn, 0xFFFF, 0);
        hosts.add(h);
        return h;
    }

    private static int copySnapshot(RawHost h, int cid, long epoch, long id, int action) {
        MemorySegment c = h.nullSglCommand(0, Opcodes.ADMIN_COPY_SNAPSHOT, cid, 1);
        SqeDescriptor.cdw(c, 10, (int) epoch);
        SqeDescriptor.cdw(c, 11, (int) (epoch >>> 32));
        SqeDescriptor.cdw(c, 12, (int) id);
        SqeDescriptor.cdw(c, 13, (int) (id >>> 32));
        SqeDescriptor.cdw(c, 14, action);
        return h.exec(c).status();
    }

    private List<String> held() {
        return f.store.snapshots().list("vol1").stream().map(x -> x.id() + ":" + x.name()).toList();
    }

    @Test
    void aPeerTakesReplacesAndDeletesTheCopysSnapshot() {
        f.store.raiseEpoch("vol1", 3);
        s.secondaryOf(PRIMARY);
        RawHost h = admin(PRIMARY);
        assertEquals(0, copySnapshot(h, 10, 3, 5, Opcodes.COPY_SNAPSHOT_TAKE));
        assertEquals(List.of("5:_5"), held());
        long created = f.store.snapshots().list("vol1").getFirst().createdMs();
        assertEquals(0, copySnapshot(h, 11, 4, 5, Opcodes.COPY_SNAPSHOT_TAKE), "a newer epoch is a newer primary");
        List<SnapshotInfo> again = f.store.snapshots().list("vol1");
        assertEquals(List.of("5:_5"), held(), "taken again: replaced, not doubled");
        assertEquals(true, again.getFirst().createdMs() >= created);
        assertEquals(0, copySnapshot(h, 12, 4, 5, Opcodes.COPY_SNAPSHOT_DELETE));
        assertEquals(List.of(), held());
        assertEquals(0, copySnapshot(h, 13, 4, 5, Opcodes.COPY_SNAPSHOT_DELETE), "deleting none is done");
    }

    @Test
    void refusesHostsBadFieldsAndADeposedPrimary() {
        f.store.raiseEpoch("vol1", 5);
        s.secondaryOf(PRIMARY);
        RawHost stranger = admin(TargetFixture.HOSTNQN); // an allowed host, not a peer node
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_OPCODE),
                copySnapshot(stranger, 10, 5, 1, Opcodes.COPY_SNAPSHOT_TAKE), "not a peer node");
        RawHost h = admin(PRIMARY);
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), copySnapshot(h, 11, 5, 1, 7), "action");
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD),
                copySnapshot(h, 12, 5, 0, Opcodes.COPY_SNAPSHOT_TAKE), "id 0");
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_RESERVATION_CONFLICT),
                copySnapshot(h, 13, 4, 1, Opcodes.COPY_SNAPSHOT_TAKE), "epoch 4 below the accepted 5");
        assertEquals(List.of(), held(), "nothing taken by a refused command");
    }
}
