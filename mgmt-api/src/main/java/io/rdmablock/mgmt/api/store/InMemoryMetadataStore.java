package io.rdmablock.mgmt.api.store;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;

/** A non-durable {@link MetadataStore} for tests and throw-away servers. */
public final class InMemoryMetadataStore implements MetadataStore {
    private final ConcurrentSkipListMap<String, VolumeRecord> volumes = new ConcurrentSkipListMap<>();
    private final ConcurrentSkipListMap<String, NodeRecord> nodes = new ConcurrentSkipListMap<>();

    @Override
    public Optional<VolumeRecord> volume(String name) {
        return Optional.ofNullable(volumes.get(name));
    }

    @Override
    public List<VolumeRecord> volumes() {
        return List.copyOf(volumes.values());
    }

    @Override
    public void putVolume(VolumeRecord volume) {
        volumes.put(volume.name(), volume);
    }

    @Override
    public void removeVolume(String name) {
        volumes.remove(name);
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
    public void removeNode(String nodeId) {
        nodes.remove(nodeId);
    }

    @Override
    public void close() {
        // nothing to release
    }
}
