package io.rdmablock.mgmt.api.store;

import java.util.List;
import java.util.Optional;

/**
 * Durable cluster metadata: volumes by name, nodes by id. Every write is durable when the call returns.
 * Implementations are thread-safe; the cluster service serialises read-modify-write sequences itself.
 * Failures surface as {@link MetadataStoreException}.
 */
public interface MetadataStore extends AutoCloseable {
    /** @return the volume with that name */
    Optional<VolumeRecord> volume(String name);

    /** @return every volume, ordered by name */
    List<VolumeRecord> volumes();

    /** Inserts or replaces the volume with {@code volume.name()}. */
    void putVolume(VolumeRecord volume);

    /** Removes the volume with that name (no-op when absent). */
    void removeVolume(String name);

    /** @return the node with that id */
    Optional<NodeRecord> node(String nodeId);

    /** @return every node, ordered by id */
    List<NodeRecord> nodes();

    /** Inserts or replaces the node with {@code node.nodeId()}. */
    void putNode(NodeRecord node);

    /** Removes the node with that id (no-op when absent). */
    void removeNode(String nodeId);

    /** Releases the store; idempotent. */
    @Override
    void close();
}
