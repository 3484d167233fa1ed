package io.rdmablock.node;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.DesiredCopy;
import io.rdmablock.mgmt.client.DesiredSnapshot;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.node.store.StoreOptions;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.node.store.VolumeStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The node applies the snapshots the management server asks of its primary copies, and reports what it holds. */
class SnapshotSyncTest {
    @TempDir
    Path dir;

    @Test
    void shouldTakeDeleteAndReportSnapshotsOfAPrimaryOfOneCopyOnly() {
        try (VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults())) {
            StoreVolume v = store.create(new VolumeSpec("v1", "data1", 8L << 20, 4096, Set.of("*")));
            SnapshotSync sync = new SnapshotSync(store, id -> null);
            DesiredSnapshot a = new DesiredSnapshot(1, "a", false);
            DesiredSnapshot b = new DesiredSnapshot(2, "b", false);

            sync.apply(desired(CopyRole.PRIMARY, 1, List.of(a, b)), v);
            assertEquals(List.of("a", "b"), sync.reports("v1").stream().map(r -> r.name()).toList());
            assertEquals(2, sync.reports("v1").get(1).id());
            assertEquals(8L << 20, sync.reports("v1").get(0).sizeBytes());

            sync.apply(desired(CopyRole.PRIMARY, 1, List.of(a, b)), v); // idempotent by id
            assertEquals(2, store.snapshots().list("v1").size());

            sync.apply(desired(CopyRole.PRIMARY, 1, List.of(new DesiredSnapshot(1, "a", true), b)), v);
            assertEquals(List.of("b"), sync.reports("v1").stream().map(r -> r.name()).toList());

            sync.apply(desired(CopyRole.PRIMARY, 1, List.of()), v); // not mentioned: kept, never deleted
            assertEquals(1, store.snapshots().list("v1").size());

            sync.apply(desired(CopyRole.SECONDARY, 1, List.of(new DesiredSnapshot(3, "c", false))), v);
            sync.apply(desired(CopyRole.PRIMARY, 3, List.of(new DesiredSnapshot(3, "c", false))), v);
            assertEquals(List.of("b"), sync.reports("v1").stream().map(r -> r.name()).toList(),
                    "a secondary, or a primary of a replicated volume, takes nothing on its own");
        }
    }

    @Test
    void shouldLeaveAFlatVolumeAloneWithoutFailing() {
        try (VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults().withClusterBytes(0))) {
            StoreVolume v = store.create(new VolumeSpec("v1", "data1", 8L << 20, 4096, Set.of("*")));
            SnapshotSync sync = new SnapshotSync(store, id -> null);
            sync.apply(desired(CopyRole.PRIMARY, 1, List.of(new DesiredSnapshot(1, "a", false))), v);
            assertTrue(sync.reports("v1").isEmpty(), "a flat volume holds no snapshot");
        }
    }

    private static DesiredVolume desired(CopyRole role, int copies, List<DesiredSnapshot> snaps) {
        List<DesiredCopy> cs = new java.util.ArrayList<>();
        for (int i = 0; i < copies && copies > 1; i++) {
            cs.add(new DesiredCopy("n" + i, i == 0 ? CopyRole.PRIMARY : CopyRole.SECONDARY, null, null, null));
        }
        return DesiredVolume.builder("v1", "data1").role(role).copies(cs).snapshots(snaps).build();
    }
}
