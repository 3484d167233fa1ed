package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * State of one copy of a replicated volume; on the wire in lower case with an underscore ({@code "in_sync"}).
 * Only {@link #IN_SYNC} copies belong to the in-sync set a host's write must reach before it is acknowledged.
 */
public enum CopyState {
    /** Holds every acknowledged write; the primary forwards to it. */
    @JsonProperty("in_sync") IN_SYNC,
    /** Dropped from the in-sync set (a forwarded command failed or timed out); misses writes until resynced. */
    @JsonProperty("stale") STALE,
    /** Being brought back (resync); not yet in the in-sync set. */
    @JsonProperty("syncing") SYNCING;

    /** @return the wire name, e.g. {@code "in_sync"} */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
