package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.VolumeRollback;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A volume's rollback as stored, inside its {@link VolumeRecord} (docs/snapshots.md, "Rollback"): there while the
 * copies roll back ({@link VolumeRollback#ROLLING_BACK}: hosts refused, every copy not yet done is asked), removed
 * once every copy reported it done; kept {@link VolumeRollback#FAILED} when a copy could not (until the next request).
 *
 * @param requestId     unique per request (a UUID), what the nodes apply once
 * @param snapshotId    the snapshot's id (the same on every copy), &gt;= 1
 * @param snapshot      the snapshot's name
 * @param force         whether connected hosts were disconnected for it
 * @param requestedAtMs when it was asked for, ms since the epoch
 * @param pending       the nodes whose copies have not reported it done
 * @param state         {@link VolumeRollback#ROLLING_BACK} or {@link VolumeRollback#FAILED}
 * @param detail        why it failed (the node and its reason); null otherwise
 */
public record RollbackRecord(String requestId, long snapshotId, String snapshot, boolean force, long requestedAtMs,
                             List<String> pending, String state, String detail) {
    /** @throws NullPointerException when {@code requestId}, {@code snapshot} or {@code state} is missing */
    public RollbackRecord {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(snapshot, "snapshot");
        Objects.requireNonNull(state, "state");
        pending = pending == null ? List.of() : List.copyOf(pending);
    }

    /** @return true while the copies roll back (hosts are refused) */
    public boolean rollingBack() {
        return VolumeRollback.ROLLING_BACK.equals(state);
    }

    /** @return a copy waiting only for {@code nodes} */
    public RollbackRecord withPending(List<String> nodes) {
        return new RollbackRecord(requestId, snapshotId, snapshot, force, requestedAtMs, nodes, state, detail);
    }

    /** @return a copy that failed for {@code why} */
    public RollbackRecord failed(String why) {
        return new RollbackRecord(requestId, snapshotId, snapshot, force, requestedAtMs, pending,
                VolumeRollback.FAILED, why);
    }

    /** @return the REST shape */
    public VolumeRollback toRollback() {
        return new VolumeRollback(requestId, snapshot, state, force, Instant.ofEpochMilli(requestedAtMs).toString(),
                pending, detail);
    }
}
