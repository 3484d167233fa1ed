package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Lifecycle of a volume; on the wire in lower case ({@code "creating"}). */
public enum VolumeState {
    /** Placed on a node; the node has not yet reported it at the desired size (also after a resize). */
    @JsonProperty("creating") CREATING,
    /** The node reported it with the desired size; hosts may connect. */
    @JsonProperty("ready") READY,
    /** Delete requested; the node removes it and the server forgets it when the node no longer reports it. */
    @JsonProperty("deleting") DELETING,
    /**
     * Reported, never stored: the volume's node is down (no heartbeat within the server's node timeout), so hosts
     * most likely cannot reach it. Resize and delete are still accepted and applied when the node returns; the
     * volume reads {@code ready} (or {@code creating}) again at the node's next heartbeat.
     */
    @JsonProperty("unavailable") UNAVAILABLE,
    /**
     * Reported, never stored: the volume serves (its primary's node is up) but fewer of its copies are
     * {@code in_sync} than it has {@code replicas}; a copy was dropped and misses writes until resynced.
     */
    @JsonProperty("degraded") DEGRADED;

    /** @return the wire name, e.g. {@code "ready"} */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
