package io.rdmablock.mgmt.api.ha;

import io.rdmablock.mgmt.api.store.MetadataStoreUnavailableException;

import java.util.Objects;
import java.util.Optional;

/**
 * What a management server knows of the management leader, for the REST layer: whether it leads itself (it alone
 * runs writes and the sweep), who leads otherwise (the target of a follower's {@code 307}), and its own advertised
 * URL. The HA REST contract (docs/ha.md): a follower answers every write under
 * {@code /v1/} with {@code 307} to the leader, {@code 503} {@code no-leader} when none is known.
 *
 * <p>Implementations are thread-safe; {@link #isLeader()} is cheap (an event loop may call it), {@link #leaderUrl()}
 * may block on etcd (call it from a worker).
 */
public interface LeaderView {
    /** @return true while this server is the leader and may decide (writes, placement, the sweep) */
    boolean isLeader();

    /**
     * @return the leader's advertised URL ({@link #selfUrl()} while this server leads), empty when nobody leads
     * @throws MetadataStoreUnavailableException when etcd cannot say within its bound
     */
    Optional<String> leaderUrl();

    /** @return this server's advertised base URL, e.g. {@code http://127.0.0.1:8080} */
    String selfUrl();

    /**
     * @return the kind of metadata store this server reads and writes: {@code "etcd"} (several servers, leader
     *         election) or {@code "local"} (RocksDB or in memory, in this process); what {@code GET /v1/leader}
     *         names in {@code metadataStore.kind}
     */
    default String storeKind() {
        return "local";
    }

    /** The single server (RocksDB, or a test's in-memory store): always leader, never redirects. */
    static LeaderView always(String selfUrl) {
        Objects.requireNonNull(selfUrl, "selfUrl");
        return new LeaderView() {
            @Override
            public boolean isLeader() {
                return true;
            }

            @Override
            public Optional<String> leaderUrl() {
                return Optional.of(selfUrl);
            }

            @Override
            public String selfUrl() {
                return selfUrl;
            }
        };
    }
}
