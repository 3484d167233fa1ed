package io.rdmablock.mgmt.api.ha;

import io.rdmablock.mgmt.api.store.HostCredentialRecord;
import io.rdmablock.mgmt.api.store.HostRecord;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.api.store.VolumeRecord;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * A {@link MetadataStore} whose writes run only while {@code leading} says so, checked right before each write:
 * a management server that lost its lease stops deciding at once, also in the middle of a sweep or a request
 * (issue 14: "a leader that loses its lease stops deciding at once"). Reads pass through (any server answers GETs).
 * The check narrows, but cannot close, the window between it and etcd applying the write; the revision-guarded
 * transactions ({@link MetadataStore#replaceVolume}) and the volumes' epochs stay the safety mechanism.
 */
public final class LeaderOnlyStore implements MetadataStore {
    private final MetadataStore delegate;
    private final BooleanSupplier leading;

    /**
     * @param delegate the store (closed by {@link #close()})
     * @param leading  true while this server may write, e.g. {@link Leadership#isLeader()}
     */
    public LeaderOnlyStore(MetadataStore delegate, BooleanSupplier leading) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.leading = Objects.requireNonNull(leading, "leading");
    }

    /** @return the wrapped store */
    public MetadataStore delegate() {
        return delegate;
    }

    private void check(String what) {
        if (!leading.getAsBoolean()) {
            throw new NotLeaderException(what + " refused: this management server is not the leader (its lease ran"
                    + " out or it lost the election); retry on the leader (GET /v1/leader)");
        }
    }

    @Override
    public Optional<VolumeRecord> volume(String name) {
        return delegate.volume(name);
    }

    @Override
    public Optional<Versioned<VolumeRecord>> volumeVersioned(String name) {
        return delegate.volumeVersioned(name);
    }

    @Override
    public List<VolumeRecord> volumes() {
        return delegate.volumes();
    }

    @Override
    public void putVolume(VolumeRecord volume) {
        check("write of volume " + volume.name());
        delegate.putVolume(volume);
    }

    @Override
    public boolean replaceVolume(String name, long expectedRevision, VolumeRecord next) {
        check("write of volume " + name);
        return delegate.replaceVolume(name, expectedRevision, next);
    }

    @Override
    public boolean removeVolume(String name, long expectedRevision) {
        check("removal of volume " + name);
        return delegate.removeVolume(name, expectedRevision);
    }

    @Override
    public void removeVolume(String name) {
        check("removal of volume " + name);
        delegate.removeVolume(name);
    }

    @Override
    public Optional<NodeRecord> node(String nodeId) {
        return delegate.node(nodeId);
    }

    @Override
    public List<NodeRecord> nodes() {
        return delegate.nodes();
    }

    @Override
    public void putNode(NodeRecord node) {
        check("write of node " + node.nodeId());
        delegate.putNode(node);
    }

    @Override
    public boolean replaceNode(String nodeId, NodeRecord expected, NodeRecord next) {
        check("write of node " + nodeId);
        return delegate.replaceNode(nodeId, expected, next);
    }

    @Override
    public void removeNode(String nodeId) {
        check("removal of node " + nodeId);
        delegate.removeNode(nodeId);
    }

    @Override
    public Optional<Versioned<HostRecord>> hostVersioned(String hostNqn) {
        return delegate.hostVersioned(hostNqn);
    }

    @Override
    public List<Versioned<HostRecord>> hosts() {
        return delegate.hosts();
    }

    @Override
    public boolean replaceHost(String hostNqn, long expectedRevision, HostRecord next) {
        check("write of host " + hostNqn);
        return delegate.replaceHost(hostNqn, expectedRevision, next);
    }

    @Override
    public boolean removeHost(String hostNqn, long expectedRevision) {
        check("removal of host " + hostNqn);
        return delegate.removeHost(hostNqn, expectedRevision);
    }

    @Override
    public Optional<HostCredentialRecord> hostCredential(String id) {
        return delegate.hostCredential(id);
    }

    @Override
    public List<HostCredentialRecord> hostCredentials() {
        return delegate.hostCredentials();
    }

    @Override
    public boolean createHostCredential(HostCredentialRecord record) {
        check("issue of host credential " + record.id());
        return delegate.createHostCredential(record);
    }

    @Override
    public boolean removeHostCredential(String id) {
        check("revocation of host credential " + id);
        return delegate.removeHostCredential(id);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
