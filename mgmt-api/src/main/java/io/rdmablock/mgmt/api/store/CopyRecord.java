package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;

import java.util.Objects;

/**
 * One copy of a volume as stored (an entry of {@link VolumeRecord#copies()}).
 *
 * @param nodeId      node holding the copy
 * @param role        primary or secondary
 * @param state       in_sync, stale or syncing; only in_sync copies are in the in-sync set
 * @param provisioned this copy's node has reported holding it (from then on a node that no longer holds it lost
 *                    its data and must not create it again empty); per copy, since each node creates its own
 */
public record CopyRecord(String nodeId, CopyRole role, CopyState state, boolean provisioned) {
    public CopyRecord {
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(state, "state");
    }

    /** @return a copy in another state */
    public CopyRecord withState(CopyState newState) {
        return new CopyRecord(nodeId, role, newState, provisioned);
    }

    /** @return a copy marked provisioned */
    public CopyRecord withProvisioned() {
        return new CopyRecord(nodeId, role, state, true);
    }
}
