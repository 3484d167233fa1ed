package io.rdmablock.node;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.DesiredRollback;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.RollbackReport;
import io.rdmablock.node.store.StoreOptions;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.node.target.Subsystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The node applies a rollback the management server asks of any copy once no host is connected, once per request id
 * (not again from a later answer, nor from a new {@link RollbackSync} after a restart), and reports it.
 */
class RollbackSyncTest {
    @TempDir
    Path dir;

    @Test
    void shouldWaitForHostsThenApplyOnceAndReport() {
        Set<String> hosts = new HashSet<>(Set.of("nqn.h1", Subsystem.NODE_HOSTNQN_PREFIX + "n0"));
        long snap;
        try (VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults())) {
            StoreVolume v = store.create(new VolumeSpec("v1", "data1", 8L << 20, 4096, Set.of("*")));
            snap = store.snapshots().create("v1", 7, "s").id();
            RollbackSync sync = new RollbackSync(store, id -> Set.copyOf(hosts));
            DesiredVolume dv = desired(CopyRole.SECONDARY, new DesiredRollback("req-1", snap, "s"));

            sync.apply(dv, v);
            assertEquals(RollbackReport.State.WAITING, sync.report("v1").state());
            assertEquals(true, sync.report("v1").detail().contains("nqn.h1"), sync.report("v1").detail());
            hosts.remove("nqn.h1"); // a peer node's association does not hold it back
            sync.apply(dv, v);
            assertEquals(RollbackReport.State.WAITING, sync.report("v1").state(), "quiet for one answer first");
            assertNull(store.snapshots().lastRollback("v1"));
            sync.apply(dv, v);
            assertEquals(new RollbackReport("req-1", RollbackReport.State.DONE, null), sync.report("v1"));
            assertEquals("req-1", store.snapshots().lastRollback("v1"));

            sync.apply(desired(CopyRole.PRIMARY, null), v); // the server cleared it
            assertNull(sync.report("v1"));
            sync.apply(desired(CopyRole.PRIMARY, new DesiredRollback("req-2", 99, "gone")), v);
            sync.apply(desired(CopyRole.PRIMARY, new DesiredRollback("req-2", 99, "gone")), v);
            assertEquals(RollbackReport.State.FAILED, sync.report("v1").state(), "no snapshot of that id here");
            assertEquals("req-1", store.snapshots().lastRollback("v1"));
        }
        try (VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults())) {
            RollbackSync sync = new RollbackSync(store, id -> Set.of());
            sync.apply(desired(CopyRole.PRIMARY, new DesiredRollback("req-1", snap, "s")), store.get("v1"));
            assertEquals(RollbackReport.State.DONE, sync.report("v1").state(), "after a restart: done, not re-run");
        }
    }

    private static DesiredVolume desired(CopyRole role, DesiredRollback r) {
        return DesiredVolume.builder("v1", "data1").role(role).copies(List.of()).rollback(r).build();
    }
}
