package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.annotation.JsonProperty;

/** State of a {@code volume verify} run (docs/resync.md, "Verify"). */
public enum VerifyState {
    /** Asked for; the primary has not reported it yet. */
    @JsonProperty("pending") PENDING,
    /** The primary is reading and comparing the copies. */
    @JsonProperty("running") RUNNING,
    /** Every region compared; {@link VerifyReport#differences()} lists what differs (empty = copies identical). */
    @JsonProperty("done") DONE,
    /** Could not complete (a copy unreachable, primary changed, I/O error): {@link VerifyReport#error()} says why. */
    @JsonProperty("failed") FAILED
}
