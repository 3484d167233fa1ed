package io.rdmablock.node.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.node.io.LocalVolumeIo;
import io.rdmablock.node.replication.PeerLink;
import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.node.replication.ReplicatedVolumeIo;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.nvme.auth.NodeLinkKeys;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An NVMe/TCP host on a replicated volume (R=2, issue 38): two targets in this JVM on the soft provider over
 * loopback, the primary ("n1") serving NVMe/TCP with the replicated volume I/O ({@link ReplicatedVolumeIo}, one
 * {@link PeerLink} to the secondary "n2", min in sync 2, so a write is acknowledged only once on both copies), the
 * secondary in secondary mode of n1's node NQN (its writes fenced by the epoch, n1 authenticated with the test node
 * key).
 */
@Timeout(120)
class TcpReplicatedTest {
    static final String PRIMARY_NQN = "nqn.2026-11.io.rdmablock:node:n1";
    static final int LBA = 512;
    static final long SIZE = 16L << 20;
    private static final long TIMEOUT_NS = 5_000_000_000L;

    @TempDir
    Path dir;
    TargetFixture primary;
    TargetFixture secondary;
    ReplicaSet set;
    TcpListener listener;

    @BeforeEach
    void start() throws IOException {
        secondary = new TargetFixture(dir.resolve("n2"), TargetOptions.defaults(), SIZE, LBA,
                Set.of(VolumeSpec.ANY_HOST));
        NodeAuth.install(secondary.target);
        secondary.target.subsystemOfVolume("vol1").secondaryOf(PRIMARY_NQN);
        primary = new TargetFixture(dir.resolve("n1"), TargetOptions.defaults(), SIZE, LBA,
                Set.of(VolumeSpec.ANY_HOST));
        PeerLink.Secrets secrets = new PeerLink.Secrets(NodeLinkKeys.hostSecret(NodeAuth.KEY, PRIMARY_NQN),
                NodeLinkKeys.ctrlSecret(NodeAuth.KEY, PRIMARY_NQN));
        PeerLink link = new PeerLink(primary.provider, secondary.target.localAddress(), secondary.subnqn,
                PRIMARY_NQN, TIMEOUT_NS, () -> true, () -> secrets, TIMEOUT_NS);
        set = new ReplicaSet("vol1", SIZE, java.nio.file.Files.createDirectories(dir.resolve("bitmaps")), 1, 2, List.of(Map.entry("n2", Map.entry(link,
                true))), new ReplicaSet.Dropper() {
                    @Override
                    public long markStale(String node, long epoch) {
                        throw new IllegalStateException("the test's management plane drops no copy");
                    }

                    @Override
                    public ReplicaSet.Primacy primacy() {
                        throw new IllegalStateException("the test's management plane is unreachable");
                    }
                });
        primary.target.subsystemOfVolume("vol1").primary(ctx -> new ReplicatedVolumeIo(LocalVolumeIo.open(ctx), set,
                ctx.entries(), LBA, TIMEOUT_NS, TIMEOUT_NS, ctx.protectionDomain()));
        listener = TcpListener.start(primary.target, new InetSocketAddress("127.0.0.1", 0));
    }

    @AfterEach
    void stop() {
        if (listener != null) {
            listener.close();
        }
        if (primary != null) {
            primary.close();
        }
        if (set != null) {
            set.close();
        }
        if (secondary != null) {
            secondary.close();
        }
    }

    /** Admin Connect and Identify over TCP; returns the controller id (the admin host in {@code admin[0]}). */
    int admin(TcpTestHost[] admin) throws IOException {
        TcpTestHost a = new TcpTestHost(listener.localAddress());
        admin[0] = a;
        a.icReq(false, true);
        assertEquals(0, a.connect(0, 31, primary.subnqn, TargetFixture.HOSTNQN, 0xFFFF), "admin Connect");
        MemorySegment id = a.identifyController();
        assertEquals(0, CqeDescriptor.status(a.cqe), "Identify");
        return IdentifyControllerDescriptor.decode(id).cntlid();
    }

    static MemorySegment pattern(TcpTestHost h, int bytes, long seed) {
        byte[] b = new byte[bytes];
        new Random(seed).nextBytes(b);
        MemorySegment s = h.arena.allocate(bytes);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, bytes);
        return s;
    }

    /** Reads {@code bytes} at {@code slba} from the secondary's copy over RDMA as the primary node (unfenced READ). */
    MemorySegment readSecondary(RawHost io, long slba, int bytes) {
        RawHost.Cqe c = io.exec(io.rw(0, Opcodes.IO_READ, 9, slba, bytes / LBA, false, 8192, bytes));
        assertEquals(0, c.status(), "READ of the secondary's copy: " + NvmeStatus.describe(c.status()));
        return io.data().asSlice(8192, bytes);
    }

    /** Admin and I/O queue of the primary node's association to the secondary ({@code out[0]}: the admin). */
    RawHost secondaryIo(RawHost[] out) {
        RawHost a = secondary.connect(0, 32, secondary.subnqn, PRIMARY_NQN, 0xFFFF, 0);
        out[0] = a;
        return secondary.connect(1, 32, secondary.subnqn, PRIMARY_NQN, TargetFixture.cntlid(a), 0);
    }

    /**
     * A TCP host writes patterns in the capsule (4 KiB, 8 KiB) and by R2T (64 KiB in one H2CData PDU, 128 KiB in 16),
     * each acknowledged only once on both copies (min in sync 2); it reads them back over TCP, and the secondary's
     * copy (read by RDMA as the primary node) holds the same bytes right after each acknowledgement.
     */
    @Test
    void aTcpHostsWritesAreOnBothCopies() throws IOException {
        TcpTestHost[] a = new TcpTestHost[1];
        int cntlid = admin(a);
        RawHost[] sa = new RawHost[1];
        try (TcpTestHost adminHost = a[0]; TcpTestHost io = new TcpTestHost(listener.localAddress())) {
            io.icReq(false, true);
            int st = io.connect(1, 15, primary.subnqn, TargetFixture.HOSTNQN, cntlid);
            assertEquals(0, st, "I/O Connect: " + NvmeStatus.describe(st));
            RawHost sec = secondaryIo(sa);
            try {
                int[][] writes = {{4096, 1, 0}, {8192, 1, 0}, {64 * 1024, 0, 0}, {128 * 1024, 0, 8192}};
                long slba = 8;
                for (int k = 0; k < writes.length; k++) {
                    int bytes = writes[k][0];
                    boolean inCapsule = writes[k][1] == 1;
                    MemorySegment data = pattern(io, bytes, 100 + k);
                    int w = io.write(slba, LBA, data, inCapsule, writes[k][2]);
                    assertEquals(0, w, bytes + "-byte WRITE " + (inCapsule ? "in the capsule" : "by R2T") + ": "
                            + NvmeStatus.describe(w));
                    assertEquals(-1, readSecondary(sec, slba, bytes).mismatch(data),
                            bytes + "-byte write acknowledged: on the secondary's copy");
                    MemorySegment back = io.arena.allocate(bytes);
                    assertEquals(0, io.read(slba, LBA, back));
                    assertEquals(-1, back.mismatch(data), bytes + "-byte write read back over TCP");
                    slba += bytes / LBA + 8;
                }
                assertEquals(2, set.view().inSyncCount(), "no copy dropped");
            } finally {
                TargetFixture.close(sec, sa[0]);
            }
        }
    }
}
