package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.SnapshotState;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@link VolumeRecord#snapshots()} as stored: JSON round trip, records of before snapshots, RocksDB reopen. */
class SnapshotRecordEncodingTest {
    private static VolumeRecord withSnapshots() {
        VolumeRecord v = VolumeRecord.created("id-1", "vol", 1 << 20, 4096, 1, List.of("*"), List.of("n1"), 1234);
        return v.withSnapshots(List.of(new SnapshotRecord(3, "b", 20, 1, SnapshotState.DELETING, 1 << 20, 0),
                new SnapshotRecord(1, "a", 10, 1, SnapshotState.READY, 1 << 20, 4096)), 5);
    }

    @Test
    void shouldRoundTripSnapshotsOldestFirst() {
        VolumeRecord v = withSnapshots();
        assertEquals(List.of("a", "b"), v.snapshots().stream().map(SnapshotRecord::name).toList());
        assertEquals(v, Json.read(Json.write(v), VolumeRecord.class));
        assertEquals(5, Json.read(Json.write(v), VolumeRecord.class).nextSnapshotId());
    }

    @Test
    void shouldReadARecordOfBeforeSnapshotsAsNone() {
        String json = Json.write(VolumeRecord.created("id-1", "vol", 1 << 20, 4096, 1, List.of("*"), List.of("n1"),
                1234)).replaceAll(",\"snapshots\":\\[\\]", "").replaceAll(",\"nextSnapshotId\":1", "");
        assertEquals(false, json.contains("snapshot"), json);
        VolumeRecord v = Json.read(json, VolumeRecord.class);
        assertEquals(List.of(), v.snapshots());
        assertEquals(1, v.nextSnapshotId());
        assertEquals(VolumeState.CREATING, v.state());
    }

    @Test
    void shouldNeverGiveAnIdAtOrBelowOneHeld() {
        VolumeRecord v = withSnapshots().withSnapshots(withSnapshots().snapshots(), 0);
        assertEquals(4, v.nextSnapshotId());
    }

    @Test
    void shouldKeepSnapshotsAcrossRocksReopen(@TempDir Path dir) {
        try (var store = new RocksMetadataStore(dir)) {
            store.putVolume(withSnapshots());
        }
        try (var store = new RocksMetadataStore(dir)) {
            assertEquals(withSnapshots(), store.volume("vol").orElseThrow());
        }
    }
}
