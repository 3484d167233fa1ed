package io.rdmablock.node.nvmf;

import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.node.store.Volume;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A target on the soft provider over loopback with one volume, and raw hosts connected to it. */
final class TargetFixture implements AutoCloseable {
    static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001";

    final VerbsProvider provider = Providers.select("soft");
    final VolumeStore store;
    final NodeMetrics metrics = new NodeMetrics();
    final Target target;
    final Volume volume;
    final String subnqn;

    TargetFixture(Path dir, TargetOptions options, long sizeBytes, int lbaSize, Set<String> allowedHosts) {
        this(dir, options, new VolumeSpec("vol1", "vol1", sizeBytes, lbaSize, allowedHosts));
    }

    /** {@code spec} null: reopens the store in {@code dir} and exports its volume "vol1" (a node restart). */
    private TargetFixture(Path dir, TargetOptions options, VolumeSpec spec) {
        store = VolumeStore.open(dir);
        volume = spec == null ? store.get("vol1") : store.create(spec);
        target = new Target(provider, store, options, metrics);
        target.start(new InetSocketAddress("127.0.0.1", 0));
        subnqn = target.addVolume(volume, null).subnqn();
    }

    TargetFixture(Path dir) {
        this(dir, TargetOptions.defaults(), 64L << 20, 512, Set.of());
    }

    /** The node restarted: the store in {@code dir} reopened (it must hold "vol1"), a new target exporting it. */
    static TargetFixture reopen(Path dir) {
        return new TargetFixture(dir, TargetOptions.defaults(), null);
    }

    RawHost host(int qid, int entries) {
        return RawHost.connect(provider, target.localAddress(), qid, entries, 1 << 20);
    }

    /** Admin queue connected (Connect succeeded); returns the host. */
    RawHost admin(int katoMs) {
        RawHost h = host(0, 32);
        RawHost.Cqe c = h.fabricConnect(31, katoMs, subnqn, HOSTNQN, 0xFFFF);
        assertEquals(0, c.status(), "admin connect status");
        return h;
    }

    /** The controller id of an admin queue's association (Identify Controller CNTLID). */
    static int cntlid(RawHost admin) {
        org.junit.jupiter.api.Assertions.assertEquals(0, admin.identify(
                io.rdmablock.rdma.fabric.Opcodes.CNS_CONTROLLER, 0).status());
        return io.rdmablock.rdma.fabric.IdentifyControllerDescriptor.decode(admin.data()).cntlid();
    }

    /** I/O queue {@code qid} of controller {@code cntlid} with {@code entries}. */
    RawHost io(int cntlid, int qid, int entries) {
        RawHost h = host(qid, entries);
        RawHost.Cqe c = h.fabricConnect(entries - 1, 0, subnqn, HOSTNQN, cntlid);
        assertEquals(0, c.status(), "I/O connect status");
        return h;
    }

    @Override
    public void close() {
        target.close();
        store.close();
        provider.close();
    }
}
