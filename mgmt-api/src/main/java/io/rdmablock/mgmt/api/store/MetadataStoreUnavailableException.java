package io.rdmablock.mgmt.api.store;

/**
 * The metadata store could not answer within its bound: its backend is unreachable or has no quorum (an etcd
 * cluster with fewer than a majority of its members up, or without a raft leader). Nothing is known about whether
 * a write that failed this way was applied: a caller re-reads before it retries. The condition is transient; the REST
 * layer answers {@code 503 Service Unavailable} (problem+json) for it, not 500: a client retries later or through
 * another management server.
 *
 * <p>Thrown by {@link EtcdMetadataStore} when a call times out ({@link EtcdMetadataStore.Config#callTimeout()}),
 * when etcd answers {@code UNAVAILABLE}/{@code DEADLINE_EXCEEDED} or "etcdserver: no leader" / "request timed out"
 * (etcd's v3 API errors, go.etcd.io/etcd/api/v3/v3rpc/rpctypes), or when the client is closed.
 */
public class MetadataStoreUnavailableException extends MetadataStoreException {
    /** @param message operation, key and bound; @param cause the client's failure (may be null) */
    public MetadataStoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
