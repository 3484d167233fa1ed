package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Role of one copy of a replicated volume; on the wire in lower case ({@code "primary"}). See docs/replication.md. */
public enum CopyRole {
    /** Hosts connect to it; it serves reads and forwards every write-type command to each in-sync secondary. */
    @JsonProperty("primary") PRIMARY,
    /** Receives forwarded commands from the primary's node only (admits only the primary's node host NQN). */
    @JsonProperty("secondary") SECONDARY;

    /** @return the wire name, e.g. {@code "primary"} */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
