package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static io.rdmablock.node.store.StoreTestSupport.buffer;
import static io.rdmablock.node.store.StoreTestSupport.fillRandom;
import static io.rdmablock.node.store.StoreTestSupport.read;
import static io.rdmablock.node.store.StoreTestSupport.spec;
import static io.rdmablock.node.store.StoreTestSupport.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The volume table: create, list, resize, delete, allow-lists, reopen and recovery. */
class VolumeStoreTest {

    private static final long MIB = 1 << 20;

    @Test
    void shouldRecoverEveryVolumeWithItsDataAfterReopen() throws Exception {
        Path dir = StoreTestSupport.freshDir("reopen");
        MemorySegment out;
        try (Arena arena = Arena.ofConfined()) {
            out = buffer(arena, 64 * 1024);
            fillRandom(out, 11);
            try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults()); BlockQueue q = s.newQueue(4)) {
                s.create(new VolumeSpec("a", "alpha", 8 * MIB, 512, Set.of("nqn.2014-08.org.example:h1")));
                StoreVolume b = s.create(spec("b", 16 * MIB, 4096));
                s.resize("b", 32 * MIB);
                write(q, b, 20 * MIB, out);
                StoreTestSupport.flush(q, b);
            }
            try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults()); BlockQueue q = s.newQueue(4)) {
                List<VolumeInfo> vols = s.list();
                assertEquals(2, vols.size());
                VolumeInfo a = vols.get(0);
                assertEquals("a", a.id());
                assertEquals("alpha", a.name());
                assertEquals(8 * MIB, a.sizeBytes());
                assertEquals(512, a.lbaSizeBytes());
                assertEquals(StoreVolumeState.ONLINE, a.state());
                assertEquals(Set.of("nqn.2014-08.org.example:h1"), a.allowedHosts());
                assertEquals(32 * MIB, vols.get(1).sizeBytes());
                assertEquals(MIB, vols.get(1).allocatedBytes(), "allocation map: one 1 MiB chunk written");
                MemorySegment in = buffer(arena, 64 * 1024);
                read(q, s.get("b"), 20 * MIB, in);
                assertEquals(-1, out.mismatch(in));
            }
        }
    }

    @Test
    void shouldRejectShrinkWithBounds() throws Exception {
        try (VolumeStore s = VolumeStore.open(StoreTestSupport.freshDir("shrink"), StoreOptions.defaults())) {
            s.create(spec("v", 8 * MIB, 4096));
            var e = assertThrows(IllegalArgumentException.class, () -> s.resize("v", 4 * MIB));
            assertTrue(e.getMessage().contains("newSizeBytes=4194304") && e.getMessage().contains("min=8388608"),
                    e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> s.resize("v", 8 * MIB + 512));
            assertEquals(8 * MIB, s.get("v").sizeBytes());
        }
    }

    @Test
    void shouldRejectInvalidSpecsNamingTheField() {
        var e = assertThrows(IllegalArgumentException.class, () -> spec("v", 8 * MIB, 1024));
        assertTrue(e.getMessage().contains("lbaSizeBytes=1024"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> spec("v", 4096 + 512, 4096));
        assertTrue(e.getMessage().contains("sizeBytes=4608"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> spec("../x", MIB, 512));
        assertTrue(e.getMessage().contains("invalid id"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> spec("v", 0, 512));
        assertThrows(IllegalArgumentException.class,
                () -> new VolumeSpec("v", "n", MIB, 512, Set.of("x".repeat(224))));
    }

    @Test
    void shouldRejectDuplicateIdAndUnknownIds() throws Exception {
        try (VolumeStore s = VolumeStore.open(StoreTestSupport.freshDir("dup"), StoreOptions.defaults())) {
            s.create(spec("v", MIB, 512));
            assertThrows(IllegalArgumentException.class, () -> s.create(spec("v", 2 * MIB, 512)));
            assertThrows(NoSuchElementException.class, () -> s.get("nope"));
            assertThrows(NoSuchElementException.class, () -> s.delete("nope"));
            assertThrows(NoSuchElementException.class, () -> s.resize("nope", 2 * MIB));
        }
    }

    @Test
    void shouldDeleteVolumeFileAndRowDurably() throws Exception {
        Path dir = StoreTestSupport.freshDir("delete");
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            s.create(spec("gone", 4 * MIB, 4096));
            s.create(spec("kept", 4 * MIB, 4096));
            s.delete("gone");
            assertFalse(Files.exists(dir.resolve("volumes/gone.vol")));
        }
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            assertEquals(List.of("kept"), s.list().stream().map(VolumeInfo::id).toList());
            s.create(spec("gone", MIB, 512)); // the id can be reused
        }
    }

    @Test
    void shouldCheckAllowedHosts() throws Exception {
        try (VolumeStore s = VolumeStore.open(StoreTestSupport.freshDir("hosts"), StoreOptions.defaults())) {
            StoreVolume v = s.create(new VolumeSpec("v", "v", MIB, 512, Set.of("nqn.h1")));
            assertTrue(v.isHostAllowed("nqn.h1"));
            assertFalse(v.isHostAllowed("nqn.h2"));
            s.setAllowedHosts("v", Set.of(VolumeSpec.ANY_HOST));
            assertTrue(v.isHostAllowed("nqn.h2"));
            s.setAllowedHosts("v", Set.of());
            assertFalse(v.isHostAllowed("nqn.h1"));
        }
    }

    @Test
    void shouldRollBackHalfDoneOperationsAndKeepOrphanFilesOnReopen() throws Exception {
        Path dir = StoreTestSupport.freshDir("recover");
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            s.create(spec("ok", MIB, 512));
        }
        // as if killed: a CREATING row with its file, a DELETING row, an orphan data file
        try (MetadataDb db = MetadataDb.open(dir.resolve("meta"))) {
            db.putVolume(new MetadataDb.Row("half", "half", MIB, 512, StoreVolumeState.CREATING, Set.of()));
            db.putVolume(new MetadataDb.Row("dying", "dying", MIB, 512, StoreVolumeState.DELETING, Set.of()));
        }
        Files.write(dir.resolve("volumes/half.vol"), new byte[512]);
        Files.write(dir.resolve("volumes/orphan.vol"), new byte[512]);
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            assertEquals(List.of("ok"), s.list().stream().map(VolumeInfo::id).toList());
            assertFalse(Files.exists(dir.resolve("volumes/half.vol")));
            assertTrue(Files.exists(dir.resolve("volumes/orphan.vol")), "a data file without a row is kept");
            assertTrue(s.isUnavailable("orphan"));
        }
    }

    @Test
    void shouldLeaveVolumeAndTableUnchangedWhenTheFileCannotGrow() throws Exception {
        Path dir = StoreTestSupport.freshDir("efbig");
        long huge = VolumeSpec.MAX_SIZE_BYTES; // 1 PiB: above the largest file of ext4 (16 TiB), xfs and tmpfs
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults().withClusterBytes(0))) {
            s.create(spec("v", MIB, 4096));
            s.create(spec("w", MIB, 4096));
            try {
                s.resize("v", huge);
            } catch (StoreException e) {
                // EFBIG: the file system cannot hold it; must change nothing, here or after a restart
                assertEquals(MIB, s.get("v").sizeBytes());
            }
        }
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults().withClusterBytes(0))) {
            assertThrows(StoreException.class, () -> s.create(spec("big", huge, 4096)));
            assertFalse(Files.exists(dir.resolve("volumes/big.vol")), "a create that failed leaves no file");
            assertFalse(s.isUnavailable("big"));
        }
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults().withClusterBytes(0))) {
            assertEquals(List.of("v", "w"), s.list().stream().map(VolumeInfo::id).toList());
            assertFalse(s.isUnavailable("big"), "no leftover of the failed create");
            long size = s.get("v").sizeBytes();
            assertTrue(size == MIB || size == huge, "size is the old one or the grown one: " + size);
        }
    }

    @Test
    void shouldKeepDataFilesWhenTheMetadataDatabaseIsLost() throws Exception {
        Path dir = StoreTestSupport.freshDir("metalost");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = buffer(arena, 64 * 1024);
            fillRandom(out, 5);
            try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults()); BlockQueue q = s.newQueue(4)) {
                StoreVolume v = s.create(spec("v", 4 * MIB, 4096));
                write(q, v, 0, out);
                StoreTestSupport.flush(q, v);
            }
            try (var files = Files.walk(dir.resolve("meta"))) { // metadata damaged / replaced by an empty one
                for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
            byte[] before = Files.readAllBytes(dir.resolve("volumes/v.vol"));
            try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
                assertEquals(List.of(), s.list());
                assertTrue(s.isUnavailable("v"));
                assertThrows(IllegalArgumentException.class, () -> s.create(spec("v", MIB, 512)),
                        "never recreated empty over the kept data");
            }
            assertEquals(-1, java.util.Arrays.mismatch(before, Files.readAllBytes(dir.resolve("volumes/v.vol"))),
                    "the only copy of the data survives the reopen");
            try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
                s.delete("v");
                assertFalse(Files.exists(dir.resolve("volumes/v.vol")));
                s.create(spec("v", MIB, 512)); // deleted on purpose: the id is free again
            }
        }
    }

    @Test
    void shouldServeOtherVolumesWhenOneDataFileIsMissing() throws Exception {
        Path dir = StoreTestSupport.freshDir("filelost");
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            s.create(spec("lost", MIB, 512));
            s.create(spec("kept", MIB, 512));
        }
        Path lostFile = dir.resolve("volumes/lost.vol");
        Path saved = dir.resolve("lost.vol.saved");
        Files.move(lostFile, saved);
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            assertEquals(List.of("kept"), s.list().stream().map(VolumeInfo::id).toList());
            assertTrue(s.isUnavailable("lost"));
            assertThrows(IllegalArgumentException.class, () -> s.create(spec("lost", MIB, 512)));
        }
        Files.move(saved, lostFile); // restored: the volume is back
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            assertEquals(List.of("kept", "lost"), s.list().stream().map(VolumeInfo::id).toList());
        }
    }

    @Test
    void shouldReportFilesystemCapacityAndFreeSpace() throws Exception {
        try (VolumeStore s = VolumeStore.open(StoreTestSupport.freshDir("cap"), StoreOptions.defaults())) {
            assertTrue(s.capacityBytes() > 0);
            assertTrue(s.freeBytes() > 0 && s.freeBytes() <= s.capacityBytes());
            assertTrue(Integer.bitCount(s.directIoAlignBytes()) == 1);
        }
    }

    @Test
    void shouldRefuseASecondOpenOfTheSameDirectory() throws Exception {
        Path dir = StoreTestSupport.freshDir("lock");
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            assertThrows(StoreException.class, () -> VolumeStore.open(dir, StoreOptions.defaults()));
        }
    }

    @Test
    void shouldNotifyListenersOfEveryTableChange() throws Exception {
        try (VolumeStore s = VolumeStore.open(StoreTestSupport.freshDir("events"), StoreOptions.defaults())) {
            List<VolumeEvent> events = new java.util.ArrayList<>();
            s.addListener(events::add);
            s.create(spec("v", MIB, 512));
            s.resize("v", 2 * MIB);
            s.setAllowedHosts("v", Set.of("nqn.h"));
            s.delete("v");
            assertEquals(List.of(VolumeEvent.Kind.CREATED, VolumeEvent.Kind.RESIZED,
                    VolumeEvent.Kind.ALLOWED_HOSTS_CHANGED, VolumeEvent.Kind.DELETED),
                    events.stream().map(VolumeEvent::kind).toList());
            assertEquals(2 * MIB, events.get(1).info().sizeBytes());
            assertEquals(StoreVolumeState.DELETING, events.get(3).info().state());
        }
    }

    @Test
    void shouldParseBackendProperty() {
        assertEquals(null, StoreOptions.parseBackend("auto"));
        assertEquals(IoBackend.IO_URING, StoreOptions.parseBackend("io_uring"));
        assertEquals(IoBackend.THREAD_POOL, StoreOptions.parseBackend("threadpool"));
        assertThrows(IllegalArgumentException.class, () -> StoreOptions.parseBackend("aio"));
    }
}
