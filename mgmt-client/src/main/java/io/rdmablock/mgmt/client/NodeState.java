package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.annotation.JsonProperty;

/** State of a storage node as seen by the management server; on the wire in lower case. */
public enum NodeState {
    /** Heartbeat seen within the node timeout and not draining: eligible for placement. */
    @JsonProperty("up") UP,
    /** No heartbeat within the node timeout. */
    @JsonProperty("down") DOWN,
    /** An operator asked to drain it: it keeps its volumes but gets no new ones. */
    @JsonProperty("draining") DRAINING;

    /** @return the wire name, e.g. {@code "up"} */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
