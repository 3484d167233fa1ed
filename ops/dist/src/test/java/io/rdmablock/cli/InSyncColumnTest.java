package io.rdmablock.cli;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@code volume list}'s {@code IN-SYNC} column while copies resync and are rebuilt (docs/resync.md). */
class InSyncColumnTest {
    private static VolumeCopy copy(String node, CopyRole role, CopyState state) {
        return new VolumeCopy(node, role, state, "127.0.0.1:4420");
    }

    private static Volume volume(int replicas, VolumeCopy... copies) {
        return new Volume("id", "v", 1 << 20, 4096, replicas, List.of(), "n1", "127.0.0.1:4420",
                Volume.subnqnOf("v"), 1, VolumeState.READY, List.of(), "2026-12-01T00:00:00Z", 3, 1, List.of(copies));
    }

    @Test
    void readsInSyncOfReplicasWithAMarkerWhileCopiesMove() {
        VolumeCopy p = copy("n1", CopyRole.PRIMARY, CopyState.IN_SYNC);
        assertEquals("2/2", VolumeCommand.inSync(volume(2, p, copy("n2", CopyRole.SECONDARY, CopyState.IN_SYNC))));
        assertEquals("1/2", VolumeCommand.inSync(volume(2, p, copy("n2", CopyRole.SECONDARY, CopyState.STALE))));
        assertEquals("1/2, 1 syncing",
                VolumeCommand.inSync(volume(2, p, copy("n2", CopyRole.SECONDARY, CopyState.SYNCING))));
        // node n2 lost: its replacement on n3 resyncs
        assertEquals("1/2, 1 syncing, rebuild +1", VolumeCommand.inSync(volume(2, p,
                copy("n2", CopyRole.SECONDARY, CopyState.STALE), copy("n3", CopyRole.SECONDARY, CopyState.SYNCING))));
        // drained n2: its replacement is in sync, n2's copy not removed yet (it used to read 3/2)
        assertEquals("2/2, rebuild +1", VolumeCommand.inSync(volume(2, p,
                copy("n2", CopyRole.SECONDARY, CopyState.IN_SYNC), copy("n3", CopyRole.SECONDARY, CopyState.IN_SYNC))));
    }
}
