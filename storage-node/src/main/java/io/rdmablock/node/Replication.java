package io.rdmablock.node;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.DesiredCopy;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.node.nvmf.LocalVolumeIo;
import io.rdmablock.node.nvmf.Subsystem;
import io.rdmablock.node.replica.ForwardLink;
import io.rdmablock.node.replica.PeerLink;
import io.rdmablock.node.replica.ReplicaSet;
import io.rdmablock.node.replica.ReplicatedVolumeIo;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.nvmf.host.FabricAddress;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Puts each volume's subsystem in the mode its copy's role says (docs/replication.md, "Node channel"): a single copy
 * is plain; a secondary admits only its primary's node host NQN and fences writes by epoch; a primary gets a
 * {@link ReplicaSet} with a {@link PeerLink} per secondary and replicated I/O queues. Runs on the agent thread
 * ({@link MgmtSync}); each link's connection set-up and Keep Alives run on a thread of that link.
 */
final class Replication implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Replication.class);

    private final String nodeId;
    private final VerbsProvider provider;
    private final MgmtClient client;
    private final Path bitmapDir;
    private final long timeoutNs;
    private final Map<String, ReplicaSet> sets = new ConcurrentHashMap<>();

    /**
     * @param timeoutNs replica timeout: a secondary that does not answer a forwarded command within it is dropped
     */
    Replication(String nodeId, VerbsProvider provider, MgmtClient client, Path bitmapDir, long timeoutNs) {
        this.nodeId = nodeId;
        this.provider = provider;
        this.client = client;
        this.bitmapDir = bitmapDir;
        this.timeoutNs = timeoutNs;
        try {
            Files.createDirectories(bitmapDir);
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + bitmapDir, e);
        }
    }

    /** True when {@code dv} has more than one copy (the volume is replicated). */
    static boolean replicated(DesiredVolume dv) {
        return dv.copies().size() > 1;
    }

    /** Applies the role of this node's copy of {@code dv} to its subsystem {@code s}. */
    void apply(DesiredVolume dv, io.rdmablock.node.store.Volume v, Subsystem s, VolumeStore store) {
        if (!replicated(dv)) {
            close(v.id());
            if (s.mode() != Subsystem.Mode.PLAIN) {
                s.plain();
            }
            return;
        }
        if (dv.epoch() > 0) {
            store.raiseEpoch(v.id(), dv.epoch());
        }
        if (dv.role() == CopyRole.SECONDARY) {
            close(v.id());
            String primaryNqn = dv.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY)
                    .map(DesiredCopy::hostnqn).findFirst().orElse(null);
            if (primaryNqn == null) {
                throw new IllegalStateException("replicated volume without a primary in the record: id=" + v.id()
                        + ", name=" + dv.name() + " (not exported)");
            }
            if (s.mode() != Subsystem.Mode.SECONDARY || !primaryNqn.equals(s.primaryHostNqn())) {
                s.secondaryOf(primaryNqn);
            }
            return;
        }
        Map<String, Boolean> inSync = new HashMap<>();
        for (DesiredCopy c : dv.copies()) {
            if (c.role() == CopyRole.SECONDARY) {
                inSync.put(c.nodeId(), c.state() == CopyState.IN_SYNC);
            }
        }
        ReplicaSet set = sets.get(v.id());
        if (set != null) {
            set.apply(dv.epoch(), dv.minInSync(), inSync);
        } else {
            set = open(dv, v);
        }
        if (s.mode() != Subsystem.Mode.PRIMARY) {
            ReplicaSet copies = set;
            int lbaSize = v.lbaSizeBytes();
            s.primary(ctx -> new ReplicatedVolumeIo(LocalVolumeIo.open(ctx), copies, ctx.entries(), lbaSize,
                    timeoutNs, ctx.protectionDomain()));
        }
    }

    /** A new replica set for this primary: a {@link PeerLink} per secondary. */
    private ReplicaSet open(DesiredVolume dv, io.rdmablock.node.store.Volume v) {
        List<Map.Entry<String, Map.Entry<ForwardLink, Boolean>>> secondaries = new ArrayList<>();
        for (DesiredCopy c : dv.copies()) {
            if (c.role() == CopyRole.SECONDARY) {
                PeerLink link = new PeerLink(provider, address(c), dv.subnqn(), Node.hostnqnOf(nodeId), timeoutNs);
                secondaries.add(Map.entry(c.nodeId(), Map.entry(link, c.state() == CopyState.IN_SYNC)));
            }
        }
        ReplicaSet created = new ReplicaSet(v.id(), v.sizeBytes(), bitmapDir, Math.max(1, dv.epoch()),
                Math.max(1, dv.minInSync()), secondaries, (node, epoch) -> markStale(dv.name(), node, epoch));
        sets.put(v.id(), created);
        LOG.info("replicated volume served as primary: id={}, name={}, epoch={}, minInSync={}, copies={}", v.id(),
                dv.name(), dv.epoch(), dv.minInSync(), created.describe());
        return created;
    }

    private static InetSocketAddress address(DesiredCopy c) {
        try {
            return c.fabricAddress() == null || c.fabricAddress().isBlank() ? null
                    : FabricAddress.parse(c.fabricAddress());
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * The compare-and-set that drops {@code node}: epoch + 1 on success; when the record moved on meanwhile, its
     * epoch if it already shows the copy out of sync, else one more attempt under the current epoch.
     */
    private long markStale(String volume, String node, long epoch) {
        try {
            return client.markCopyStale(volume, node, epoch, nodeId).epoch();
        } catch (MgmtException e) {
            if (!ProblemTypes.EPOCH_MISMATCH.equals(e.type())) {
                throw e;
            }
            Volume current = client.getVolume(volume);
            VolumeCopy copy = current.copies().stream().filter(c -> c.nodeId().equals(node)).findFirst()
                    .orElse(null);
            if (copy == null || copy.state() != CopyState.IN_SYNC) {
                return current.epoch();
            }
            return client.markCopyStale(volume, node, current.epoch(), nodeId).epoch();
        }
    }

    /** Stops replicating volume {@code id} (deleted, no longer primary). */
    void close(String id) {
        ReplicaSet s = sets.remove(id);
        if (s != null) {
            s.close();
        }
    }

    @Override
    public void close() {
        for (String id : List.copyOf(sets.keySet())) {
            close(id);
        }
    }
}
