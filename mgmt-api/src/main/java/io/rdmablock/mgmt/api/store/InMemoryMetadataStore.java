package io.rdmablock.mgmt.api.store;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A non-durable {@link MetadataStore} for tests and throw-away servers. Volume writes take this object's lock, so
 * a compare-and-set is atomic against every other volume write; revisions count volume and host writes from 1 (hosts
 * take the same lock).
 */
public final class InMemoryMetadataStore implements MetadataStore {
    private final ConcurrentSkipListMap<String, Versioned<VolumeRecord>> volumes = new ConcurrentSkipListMap<>();
    private final ConcurrentSkipListMap<String, NodeRecord> nodes = new ConcurrentSkipListMap<>();
    private final ConcurrentSkipListMap<String, Versioned<HostRecord>> hosts = new ConcurrentSkipListMap<>();
    private final ConcurrentSkipListMap<String, HostCredentialRecord> hostCredentials = new ConcurrentSkipListMap<>();
    /** Last revision given out; guarded by this. */
    private long revision;

    @Override
    public Optional<VolumeRecord> volume(String name) {
        return volumeVersioned(name).map(Versioned::value);
    }

    @Override
    public Optional<Versioned<VolumeRecord>> volumeVersioned(String name) {
        return Optional.ofNullable(volumes.get(name));
    }

    @Override
    public List<VolumeRecord> volumes() {
        return volumes.values().stream().map(Versioned::value).toList();
    }

    @Override
    public synchronized void putVolume(VolumeRecord volume) {
        volumes.put(volume.name(), new Versioned<>(volume, ++revision));
    }

    @Override
    public synchronized boolean replaceVolume(String name, long expectedRevision, VolumeRecord next) {
        MetadataStore.checkReplace(name, expectedRevision, next);
        Versioned<VolumeRecord> current = volumes.get(name);
        if ((current == null ? 0 : current.revision()) != expectedRevision) {
            return false;
        }
        volumes.put(name, new Versioned<>(next, ++revision));
        return true;
    }

    @Override
    public synchronized void removeVolume(String name) {
        volumes.remove(name);
    }

    @Override
    public synchronized boolean removeVolume(String name, long expectedRevision) {
        MetadataStore.checkRemove(expectedRevision);
        Versioned<VolumeRecord> current = volumes.get(name);
        if (current == null || current.revision() != expectedRevision) {
            return false;
        }
        volumes.remove(name);
        return true;
    }

    @Override
    public Optional<NodeRecord> node(String nodeId) {
        return Optional.ofNullable(nodes.get(nodeId));
    }

    @Override
    public List<NodeRecord> nodes() {
        return List.copyOf(nodes.values());
    }

    @Override
    public void putNode(NodeRecord node) {
        nodes.put(node.nodeId(), node);
    }

    @Override
    public boolean replaceNode(String nodeId, NodeRecord expected, NodeRecord next) {
        MetadataStore.checkReplaceNode(nodeId, expected, next);
        return expected == null ? nodes.putIfAbsent(nodeId, next) == null : nodes.replace(nodeId, expected, next);
    }

    @Override
    public void removeNode(String nodeId) {
        nodes.remove(nodeId);
    }

    @Override
    public Optional<Versioned<HostRecord>> hostVersioned(String hostNqn) {
        return Optional.ofNullable(hosts.get(hostNqn));
    }

    @Override
    public List<Versioned<HostRecord>> hosts() {
        return List.copyOf(hosts.values());
    }

    @Override
    public synchronized boolean replaceHost(String hostNqn, long expectedRevision, HostRecord next) {
        MetadataStore.checkReplaceHost(hostNqn, expectedRevision, next);
        Versioned<HostRecord> current = hosts.get(hostNqn);
        if ((current == null ? 0 : current.revision()) != expectedRevision) {
            return false;
        }
        hosts.put(hostNqn, new Versioned<>(next, ++revision));
        return true;
    }

    @Override
    public synchronized boolean removeHost(String hostNqn, long expectedRevision) {
        MetadataStore.checkRemove(expectedRevision);
        Versioned<HostRecord> current = hosts.get(hostNqn);
        if (current == null || current.revision() != expectedRevision) {
            return false;
        }
        hosts.remove(hostNqn);
        return true;
    }

    @Override
    public Optional<HostCredentialRecord> hostCredential(String id) {
        return Optional.ofNullable(hostCredentials.get(id));
    }

    @Override
    public List<HostCredentialRecord> hostCredentials() {
        return List.copyOf(hostCredentials.values());
    }

    @Override
    public boolean createHostCredential(HostCredentialRecord record) {
        return hostCredentials.putIfAbsent(record.id(), record) == null;
    }

    @Override
    public boolean removeHostCredential(String id) {
        return hostCredentials.remove(id) != null;
    }

    @Override
    public void close() {
        // nothing to release
    }
}
