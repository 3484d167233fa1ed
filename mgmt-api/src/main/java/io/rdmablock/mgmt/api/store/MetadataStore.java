package io.rdmablock.mgmt.api.store;

import java.util.List;
import java.util.Optional;

/**
 * Durable cluster metadata: volumes by name, nodes by id, hosts (DH-HMAC-CHAP secrets: sealed with a
 * {@link SecretCipher} when the store has a key, else in clear; given and taken in clear here) by NQN,
 * host credentials (their hashes) by id.
 * Every write is durable when the call returns. Implementations are thread-safe; the cluster service serialises
 * read-modify-write sequences itself. Failures surface as {@link MetadataStoreException}.
 *
 * <p>Compare-and-set on volumes: {@link #volumeVersioned(String)} reads a record with its store revision
 * ({@link Versioned}), {@link #replaceVolume(String, long, VolumeRecord)} writes only if that revision is still
 * the key's. The shape is etcd's: a read returns {@code mod_revision}; the write is one transaction
 * {@code If(ModRevision(key) == expected).Then(Put(key, next))}, and {@code expected == 0} means "the key does
 * not exist" (etcd's revision of a missing key). Every write ({@link #putVolume}, {@link #replaceVolume}) gives
 * the key a new revision, larger than any before it in this store.
 */
public interface MetadataStore extends AutoCloseable {
    /** @return the volume with that name */
    Optional<VolumeRecord> volume(String name);

    /** @return the volume with that name and the store's revision of it */
    Optional<Versioned<VolumeRecord>> volumeVersioned(String name);

    /** @return every volume, ordered by name */
    List<VolumeRecord> volumes();

    /** Inserts or replaces the volume with {@code volume.name()}, unconditionally. */
    void putVolume(VolumeRecord volume);

    /**
     * Compare-and-set: writes {@code next} under {@code name} only if the key's current revision is
     * {@code expectedRevision} (0: only if absent). Atomic against every other write of the store.
     *
     * @return true when written; false when the key's revision differs (nothing written)
     * @throws IllegalArgumentException when {@code next.name()} is not {@code name} or expectedRevision &lt; 0
     */
    boolean replaceVolume(String name, long expectedRevision, VolumeRecord next);

    /** Removes the volume with that name (no-op when absent), unconditionally. */
    void removeVolume(String name);

    /**
     * Compare-and-delete: removes the volume only if the key's current revision is {@code expectedRevision} (etcd:
     * one transaction {@code If(ModRevision(key) == expected).Then(Delete(key))}).
     *
     * @return true when removed; false when the key's revision differs or it is absent (nothing removed)
     * @throws IllegalArgumentException when expectedRevision &lt; 1
     */
    boolean removeVolume(String name, long expectedRevision);

    /** @return the node with that id */
    Optional<NodeRecord> node(String nodeId);

    /** @return every node, ordered by id */
    List<NodeRecord> nodes();

    /** Inserts or replaces the node with {@code node.nodeId()}, unconditionally (tools and tests). */
    void putNode(NodeRecord node);

    /**
     * Compare-and-set of a node by value: writes {@code next} under {@code nodeId} only if the stored record equals
     * {@code expected} ({@code null}: only if absent). Atomic against every other node write of the store (etcd: one
     * transaction {@code If(ModRevision(key) == revision read).Then(Put(key, next))}). The management server writes
     * node records only by this, so two writers (a registration and a heartbeat making a missing node key) cannot
     * lose each other's change.
     *
     * @return true when written; false when the stored record differs (nothing written)
     * @throws IllegalArgumentException when {@code next.nodeId()} is not {@code nodeId}, or {@code expected} is
     *                                  non-null with another node id
     */
    boolean replaceNode(String nodeId, NodeRecord expected, NodeRecord next);

    /** Removes the node with that id (no-op when absent). */
    void removeNode(String nodeId);

    /**
     * @return the host with that NQN and the store's revision of it (revisions as for volumes: every write of any
     *         key of the store gives a larger one)
     */
    Optional<Versioned<HostRecord>> hostVersioned(String hostNqn);

    /** @return every host with its revision, ordered by NQN */
    List<Versioned<HostRecord>> hosts();

    /**
     * Compare-and-set of a host, as {@link #replaceVolume}: writes {@code next} only if the key's revision is
     * {@code expectedRevision} (0: only if absent).
     *
     * @return true when written; false when the key's revision differs (nothing written)
     * @throws IllegalArgumentException when {@code next.hostNqn()} is not {@code hostNqn} or expectedRevision &lt; 0
     */
    boolean replaceHost(String hostNqn, long expectedRevision, HostRecord next);

    /**
     * Compare-and-delete of a host, as {@link #removeVolume(String, long)}.
     *
     * @return true when removed; false when the key's revision differs or it is absent
     * @throws IllegalArgumentException when expectedRevision &lt; 1
     */
    boolean removeHost(String hostNqn, long expectedRevision);

    /** @return the host credential with that id (docs/authentication.md, "Credentials and scopes") */
    Optional<HostCredentialRecord> hostCredential(String id);

    /** @return every host credential, ordered by id */
    List<HostCredentialRecord> hostCredentials();

    /**
     * Creates a host credential only if no record has its id (etcd: one transaction
     * {@code If(ModRevision(key) == 0).Then(Put(key, record))}).
     *
     * @return true when written; false when the id is taken (nothing written)
     */
    boolean createHostCredential(HostCredentialRecord record);

    /** Removes the host credential with that id; @return true when it was there */
    boolean removeHostCredential(String id);

    /** Releases the store; idempotent. */
    @Override
    void close();

    /** Checks the revision of {@link #removeVolume(String, long)} (shared by the implementations). */
    static void checkRemove(long expectedRevision) {
        if (expectedRevision < 1) {
            throw new IllegalArgumentException("invalid expectedRevision: expectedRevision=" + expectedRevision
                    + ", min=1");
        }
    }

    /** Checks the arguments of {@link #replaceNode} (shared by the implementations). */
    static void checkReplaceNode(String nodeId, NodeRecord expected, NodeRecord next) {
        if (!nodeId.equals(next.nodeId())) {
            throw new IllegalArgumentException("invalid next.nodeId: next.nodeId=" + next.nodeId() + ", must be "
                    + nodeId);
        }
        if (expected != null && !nodeId.equals(expected.nodeId())) {
            throw new IllegalArgumentException("invalid expected.nodeId: expected.nodeId=" + expected.nodeId()
                    + ", must be " + nodeId);
        }
    }

    /** Checks the arguments of {@link #replaceHost} (shared by the implementations). */
    static void checkReplaceHost(String hostNqn, long expectedRevision, HostRecord next) {
        if (!hostNqn.equals(next.hostNqn())) {
            throw new IllegalArgumentException("invalid next.hostNqn: next.hostNqn=" + next.hostNqn() + ", must be "
                    + hostNqn);
        }
        if (expectedRevision < 0) {
            throw new IllegalArgumentException("invalid expectedRevision: expectedRevision=" + expectedRevision
                    + ", min=0");
        }
    }

    /** Checks the arguments of {@link #replaceVolume} (shared by the implementations). */
    static void checkReplace(String name, long expectedRevision, VolumeRecord next) {
        if (!name.equals(next.name())) {
            throw new IllegalArgumentException("invalid next.name: next.name=" + next.name() + ", must be " + name);
        }
        if (expectedRevision < 0) {
            throw new IllegalArgumentException("invalid expectedRevision: expectedRevision=" + expectedRevision
                    + ", min=0");
        }
    }
}
