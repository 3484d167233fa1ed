package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The management leader as one management server knows it ({@code GET /v1/leader}).
 *
 * @param leader        the leader's advertised base URL, null while none is known (an election in progress, etcd
 *                      unreachable)
 * @param self          the advertised base URL of the server that answered
 * @param isLeader      true when the server that answered leads
 * @param metadataStore whether that server could read its metadata store while answering; null from servers that
 *                      do not say (before {@code rdmablock status})
 */
public record Leader(String leader, String self, @JsonProperty("isLeader") boolean isLeader,
                     MetadataStoreHealth metadataStore) {

    /**
     * One read of the metadata store by the server that answered.
     *
     * @param kind      {@code "etcd"} or {@code "local"} (RocksDB or in memory, in the server's process)
     * @param reachable true when the read succeeded
     * @param detail    why it failed, null when reachable
     */
    public record MetadataStoreHealth(String kind, boolean reachable, String detail) {
    }
}
