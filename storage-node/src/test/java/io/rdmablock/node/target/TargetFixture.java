package io.rdmablock.node.target;

import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A target on the soft provider over loopback with one volume, and raw hosts connected to it. */
final class TargetFixture implements AutoCloseable {
    static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001";

    final VerbsProvider provider;
    final VolumeStore store;
    final NodeMetrics metrics = new NodeMetrics();
    final Target target;
    final StoreVolume volume;
    final String subnqn;

    TargetFixture(Path dir, TargetOptions options, long sizeBytes, int lbaSize, Set<String> allowedHosts) {
        this(dir, options, new VolumeSpec("vol1", "vol1", sizeBytes, lbaSize, allowedHosts), "127.0.0.1",
                io.rdmablock.node.NodeConfiguration.fromSystemProperties(), Providers.select("soft"));
    }

    /** The default volume (64 MiB, 512-byte LBAs, any host) on {@code provider} instead of soft. */
    TargetFixture(Path dir, VerbsProvider provider) {
        this(dir, TargetOptions.defaults(), new VolumeSpec("vol1", "vol1", 64L << 20, 512, Set.of(VolumeSpec.ANY_HOST)),
                "127.0.0.1", io.rdmablock.node.NodeConfiguration.fromSystemProperties(), provider);
    }

    /** As above, with the node's {@code -D} knobs given ({@link io.rdmablock.node.NodeConfiguration}). */
    TargetFixture(Path dir, TargetOptions options, long sizeBytes, int lbaSize, Set<String> allowedHosts,
                  io.rdmablock.node.NodeConfiguration configuration) {
        this(dir, options, new VolumeSpec("vol1", "vol1", sizeBytes, lbaSize, allowedHosts), "127.0.0.1",
                configuration, Providers.select("soft"));
    }

    /** As above, listening on {@code listenHost} (e.g. 0.0.0.0, for hosts on several loopback addresses). */
    TargetFixture(Path dir, TargetOptions options, long sizeBytes, int lbaSize, Set<String> allowedHosts,
                  String listenHost) {
        this(dir, options, new VolumeSpec("vol1", "vol1", sizeBytes, lbaSize, allowedHosts), listenHost,
                io.rdmablock.node.NodeConfiguration.fromSystemProperties(), Providers.select("soft"));
    }

    /** {@code spec} null: reopens the store in {@code dir} and exports its volume "vol1" (a node restart). */
    private TargetFixture(Path dir, TargetOptions options, VolumeSpec spec, String listenHost,
                          io.rdmablock.node.NodeConfiguration configuration, VerbsProvider provider) {
        this.provider = provider;
        store = VolumeStore.open(dir, configuration.storeOptions());
        store.setFaults(configuration.storeFaultsRule());
        volume = spec == null ? store.get("vol1") : store.create(spec);
        target = new Target(provider, store, options, metrics, configuration.target(),
                io.rdmablock.node.io.LocalVolumeIo::open);
        target.start(new InetSocketAddress(listenHost, 0));
        subnqn = target.addVolume(volume, null).subnqn();
    }

    TargetFixture(Path dir) {
        this(dir, TargetOptions.defaults(), 64L << 20, 512, Set.of(VolumeSpec.ANY_HOST));
    }

    /** The node restarted: the store in {@code dir} reopened (it must hold "vol1"), a new target exporting it. */
    static TargetFixture reopen(Path dir) {
        return new TargetFixture(dir, TargetOptions.defaults(), null, "127.0.0.1",
                io.rdmablock.node.NodeConfiguration.fromSystemProperties(), Providers.select("soft"));
    }

    RawHost host(int qid, int entries) {
        InetSocketAddress a = target.localAddress();
        if (a.getAddress().isAnyLocalAddress()) {
            a = new InetSocketAddress("127.0.0.1", a.getPort());
        }
        return RawHost.connect(provider, a, qid, entries, 1 << 20);
    }

    /** Admin queue connected (Connect succeeded); returns the host. */
    RawHost admin(int katoMs) {
        return connect(0, 32, subnqn, HOSTNQN, 0xFFFF, katoMs);
    }

    /**
     * Queue {@code qid} with {@code entries} (SQSIZE {@code entries - 1}) connected to {@code subnqn} as
     * {@code hostnqn}: an admin queue ({@code cntlid} 0xFFFF, a new association) or an I/O queue of controller
     * {@code cntlid}; asserts the Connect succeeded.
     */
    RawHost connect(int qid, int entries, String subnqn, String hostnqn, int cntlid, int katoMs) {
        boolean node = HostSecrets.isNodeNqn(hostnqn);
        if (node && !target.hostSecrets().hasNodeKey()) {
            NodeAuth.install(target); // as the management plane's node key: peer nodes must authenticate
        }
        RawHost h = host(qid, entries);
        try {
            RawHost.Cqe c = h.fabricConnect(entries - 1, katoMs, subnqn, hostnqn, cntlid);
            assertEquals(0, c.status(), (qid == 0 ? "admin" : "I/O") + " connect of " + hostnqn + " to " + subnqn
                    + ": " + NvmeStatus.describe(c.status()));
            if (node) {
                NodeAuth.authenticate(h, NodeAuth.KEY, hostnqn, subnqn, qid);
            }
        } catch (RuntimeException | AssertionError e) {
            h.close();
            throw e;
        }
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
        return connect(qid, entries, subnqn, HOSTNQN, cntlid, 0);
    }

    /** Asserts a Connect was answered Invalid Parameters at {@code offset} of the SQE or (inData) of its data. */
    static void assertInvalidParameter(RawHost.Cqe c, boolean inData, int offset) {
        assertEquals(NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_PARAMETERS), c.status());
        assertEquals(ConnectDataDescriptor.invalidParameterDw0(inData, offset), c.dw0());
    }

    /** Closes each host that is not null, in order. */
    static void close(RawHost... hosts) {
        for (RawHost h : hosts) {
            if (h != null) {
                h.close();
            }
        }
    }

    @Override
    public void close() {
        target.close();
        store.close();
        provider.close();
    }
}
