package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Where a snapshot is in its life (docs/snapshots.md). */
public enum SnapshotState {
    /** Recorded by the management server; the volume's primary has not reported taking it yet. */
    @JsonProperty("creating") CREATING,
    /** Held by the volume's copies: it can be read, rolled back to and deleted. */
    @JsonProperty("ready") READY,
    /** Delete requested; the record goes once the primary no longer reports it. */
    @JsonProperty("deleting") DELETING
}
