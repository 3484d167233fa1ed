package io.rdmablock.node.replication;

import io.rdmablock.node.store.SnapshotInfo;
import io.rdmablock.node.store.Snapshots;
import io.rdmablock.node.store.StoreOptions;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The primary's side of a replicated snapshot ({@link SnapshotCut}, docs/snapshots.md "Replicated volumes") against
 * fake secondaries and a real store: every in-sync copy is asked at the epoch of the view and none other; all or
 * nothing (a copy that fails makes every copy that took it delete it again, the local one included); the primary's
 * own snapshot carries its name only once every copy confirmed, and one held under the copy name (a cut cut short)
 * is taken again; a delete needs every in-sync copy's confirmation before the local one goes.
 */
class SnapshotCutTest {
    @TempDir
    Path dir;
    private VolumeStore store;
    private ReplicaSet set;

    /** A secondary: answers copy snapshot commands with {@code status} (-1: unreachable), records them. */
    static final class Fake implements ForwardLink {
        volatile int status;
        final List<String> asked = new CopyOnWriteArrayList<>();

        Fake(int status) {
            this.status = status;
        }

        @Override
        public CompletableFuture<ForwardQueue> open(int entries, ProtectionDomain pd, ForwardQueue.Listener l) {
            return CompletableFuture.failedFuture(new IllegalStateException("no queues in this test"));
        }

        @Override
        public CompletableFuture<Integer> copySnapshot(long epoch, long snapshotId, boolean delete, long timeoutNs) {
            asked.add((delete ? "delete " : "take ") + snapshotId + "@" + epoch);
            return status < 0 ? CompletableFuture.failedFuture(new IllegalStateException("unreachable"))
                    : CompletableFuture.completedFuture(status);
        }

        @Override
        public void close() {
        }
    }

    private Fake[] start(boolean... inSync) {
        store = VolumeStore.open(dir.resolve("store"), StoreOptions.defaults());
        store.create(new VolumeSpec("vol", "vol", 8L << 20, 4096, Set.of("*")));
        List<Map.Entry<String, Map.Entry<ForwardLink, Boolean>>> secondaries = new ArrayList<>();
        Fake[] fakes = new Fake[inSync.length];
        for (int i = 0; i < inSync.length; i++) {
            fakes[i] = new Fake(0);
            secondaries.add(Map.entry("n" + (i + 2), Map.entry(fakes[i], inSync[i])));
        }
        set = new ReplicaSet("vol", 8L << 20, dir, 7, 1, secondaries, (node, epoch) -> epoch + 1);
        return fakes;
    }

    @AfterEach
    void close() {
        if (set != null) {
            set.close();
        }
        if (store != null) {
            store.close();
        }
    }

    private List<String> held() {
        return store.snapshots().list("vol").stream().map(s -> s.id() + ":" + s.name()).toList();
    }

    @Test
    void asksEveryInSyncCopyAtTheViewsEpochAndNamesItsOwnOnceAllConfirmed() {
        Fake[] f = start(true, false, true);
        SnapshotInfo s = new SnapshotCut(set, store.snapshots(), 1_000).take(3, "daily");
        assertEquals("daily", s.name());
        assertEquals(List.of("3:daily"), held());
        assertEquals(List.of("take 3@7"), f[0].asked);
        assertEquals(List.of(), f[1].asked, "a stale copy is not asked");
        assertEquals(List.of("take 3@7"), f[2].asked);
    }

    @Test
    void aCopyThatFailsUndoesTheCutOnEveryCopyThatTookIt() {
        Fake[] f = start(true, true);
        f[1].status = 0x06; // Internal Error
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> new SnapshotCut(set, store.snapshots(), 1_000).take(4, "x"));
        assertTrue(e.getMessage().contains("n3"), e.getMessage());
        assertEquals(List.of(), held(), "the local snapshot is deleted again");
        assertEquals(List.of("take 4@7", "delete 4@7"), f[0].asked, "the copy that took it deletes it again");
        assertEquals(List.of("take 4@7"), f[1].asked);

        f[1].status = -1; // unreachable: the same
        assertThrows(IllegalStateException.class, () -> new SnapshotCut(set, store.snapshots(), 1_000).take(4, "x"));
        assertEquals(List.of(), held());
    }

    @Test
    void aCutHeldUnderTheCopyNameIsTakenAgainAndThenNamed() {
        start(true);
        Snapshots local = store.snapshots();
        local.takeCopy("vol", 5); // a cut cut short: the primary killed before every copy confirmed
        assertEquals(List.of("5:_5"), held());
        assertTrue(Snapshots.isCopyName("_5") && !Snapshots.isCopyName("daily"));
        new SnapshotCut(set, local, 1_000).take(5, "weekly");
        assertEquals(List.of("5:weekly"), held());
    }

    @Test
    void aDeleteNeedsEveryInSyncCopyBeforeTheLocalOneGoes() {
        Fake[] f = start(true, false);
        new SnapshotCut(set, store.snapshots(), 1_000).take(6, "s");
        f[0].status = -1;
        f[1].status = -1; // a stale copy unreachable: asked, not needed
        assertThrows(IllegalStateException.class, () -> new SnapshotCut(set, store.snapshots(), 1_000).delete(6));
        assertEquals(List.of("6:s"), held(), "kept: an in-sync copy did not confirm");
        f[0].status = 0;
        new SnapshotCut(set, store.snapshots(), 1_000).delete(6);
        assertEquals(List.of(), held());
        assertTrue(f[1].asked.contains("delete 6@7"), f[1].asked.toString());
    }
}
