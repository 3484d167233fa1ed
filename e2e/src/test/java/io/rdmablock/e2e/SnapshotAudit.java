package io.rdmablock.e2e;

import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotState;
import io.rdmablock.node.store.SnapshotInfo;
import io.rdmablock.node.store.StoreOptions;
import io.rdmablock.node.store.VolumeStore;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.rdmablock.e2e.BlockStamps.BLOCK;
import static io.rdmablock.e2e.SnapshotHistory.NEVER;

/**
 * The end of {@link FailoverCampaign}'s snapshot check: each volume that took snapshots is kept (not deleted) and
 * {@link #add}ed when its load stops; once every node is stopped, {@link #run} reads each ready snapshot from every
 * copy's store (as {@link NodeCluster#copyImage} does, one store opening per node) and checks each image with
 * {@link SnapshotChecker}, and that every copy holding it holds the same bytes. A copy without it is counted
 * ({@code snapshot_copies_missing}): the design promises it on every copy in sync at the cut, and the record's
 * in-sync set lags the primary's (a copy dropped at the cut is marked stale a heartbeat later), so only the primary
 * that reported it (the record's primary once it was seen ready) must hold it.
 */
final class SnapshotAudit {
    private record Subject(String name, String volumeId, SnapshotHistory history, SnapshotTaker taker,
                           List<Snapshot> ready, long listed) {
    }

    /** One copy's image of one snapshot: its sequences per block and the digest of all its bytes. */
    record Image(long[] seqs, byte[] digest) {
    }

    private final List<Subject> subjects = new ArrayList<>();
    private final List<SnapshotTaker> takers = new ArrayList<>();
    private int taken, checked, failed, images, missing, missingInSync;
    private final List<String> failures = new ArrayList<>();

    /** Records the snapshots of a volume whose load has stopped (its taker and writers joined). */
    void add(MgmtClient client, CampaignLoad s, SnapshotTaker taker) {
        takers.add(taker);
        try {
            List<Snapshot> list = client.listSnapshots(s.name);
            taker.noteReady(list);
            String id = client.getVolume(s.name).id();
            subjects.add(new Subject(s.name, id, s.history, taker,
                    list.stream().filter(x -> x.state() == SnapshotState.READY).toList(), s.history.tick()));
        } catch (RuntimeException e) {
            failed++;
            fail("volume " + s.name + ": cannot list its snapshots: " + e);
        }
    }

    private void fail(String why) {
        if (failures.size() < 20) {
            failures.add(why);
            FailoverCampaign.say("  snapshot check FAILED: " + why);
        }
    }

    /** Checks every ready snapshot on every copy; the nodes must be stopped. True when all passed. */
    boolean run(NodeCluster cluster, int nodes) throws IOException {
        Map<String, Image[]> found = new HashMap<>(); // volume/snapshot -> image per node (null: not held)
        for (int k = 1; k <= nodes; k++) {
            try (VolumeStore store = VolumeStore.open(cluster.dataDir(k), StoreOptions.defaults())) {
                for (Subject sub : subjects) {
                    List<SnapshotInfo> held;
                    try {
                        held = store.snapshots().list(sub.volumeId());
                    } catch (RuntimeException e) {
                        held = List.of(); // no copy of this volume here
                    }
                    for (Snapshot snap : sub.ready()) {
                        for (SnapshotInfo info : held) {
                            if (info.id() == snap.id()) {
                                found.computeIfAbsent(sub.name() + "/" + snap.id(), x -> new Image[nodes + 1])[k] =
                                        read(store, sub.volumeId(), info.name(), sub.history().blocks());
                            }
                        }
                    }
                }
            }
        }
        for (Subject sub : subjects) {
            for (SnapshotTaker.Taken t : sub.taker().taken.values()) {
                taken += t.complete != NEVER ? 1 : 0;
            }
            for (Snapshot snap : sub.ready()) {
                check(sub, snap, found.getOrDefault(sub.name() + "/" + snap.id(), new Image[nodes + 1]));
            }
        }
        return failed == 0;
    }

    private void check(Subject sub, Snapshot snap, Image[] copies) {
        SnapshotTaker.Taken t = sub.taker().taken.get(snap.name());
        String what = "volume " + sub.name() + " snapshot " + snap.name() + " (id " + snap.id() + ")";
        if (t == null) {
            failed++;
            fail(what + ": not one the campaign asked for");
            return;
        }
        long complete = t.complete != NEVER ? t.complete : sub.listed();
        Image first = null;
        int firstNode = 0;
        boolean ok = true;
        for (int k = 1; k < copies.length; k++) {
            Image img = copies[k];
            if (img == null) {
                missing++;
                if (t.inSync.contains(k)) {
                    missingInSync++;
                }
                if (k == t.primary) {
                    fail(what + ": not held by n" + k + ", the primary that reported it");
                    ok = false;
                }
                continue;
            }
            images++;
            SnapshotChecker.Result r = SnapshotChecker.check(sub.history(), t.request, complete, img.seqs());
            if (!r.clean()) {
                fail(what + " on n" + k + ": " + r);
                ok = false;
            }
            if (first == null) {
                first = img;
                firstNode = k;
            } else if (!Arrays.equals(first.digest(), img.digest())) {
                fail(what + ": the copies on n" + firstNode + " and n" + k + " differ" + difference(sub.history(), t,
                        complete, first, img));
                ok = false;
            }
        }
        if (first == null) {
            fail(what + ": ready, but no copy holds it");
            ok = false;
        } else {
            checked++;
        }
        failed += ok ? 0 : 1;
    }

    /** How two copies' images differ: blocks, and the first one's versions with their ticks against the snapshot's. */
    static String difference(SnapshotHistory h, SnapshotTaker.Taken t, long complete, Image a, Image b) {
        int n = 0, first = -1;
        for (int i = 0; i < a.seqs().length; i++) {
            if (a.seqs()[i] != b.seqs()[i]) {
                n++;
                first = first < 0 ? i : first;
            }
        }
        if (first < 0) {
            return " (outside the load's blocks)";
        }
        return " in " + n + " blocks; first block " + first + ": " + version(h, first, a.seqs()[first]) + " and "
                + version(h, first, b.seqs()[first]) + "; snapshot requested at tick " + t.request + ", ready by "
                + complete;
    }

    private static String version(SnapshotHistory h, int block, long v) {
        if (v <= 0 || !h.written(block, v)) {
            return "version " + v;
        }
        long acked = h.ackedAt(block, v);
        return "version " + v + " (issued at tick " + h.issuedAt(block, v) + ", "
                + (acked == NEVER ? "never acknowledged" : "acknowledged at " + acked) + ")";
    }

    private static Image read(VolumeStore store, String volumeId, String name, int blocks) throws IOException {
        var view = store.snapshots().open(volumeId, name);
        long[] seqs = new long[blocks];
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (var q = store.newQueue(1); Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(1 << 20, 4096);
            long[] ud = new long[1];
            int[] res = new int[1];
            for (long off = 0; off < view.sizeBytes(); off += buf.byteSize()) {
                MemorySegment slice = buf.asSlice(0, Math.min(buf.byteSize(), view.sizeBytes() - off));
                q.submitRead(view, off, slice, 1);
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (q.reap(ud, res, 1) == 0) {
                    if (System.nanoTime() > deadline) {
                        throw new IOException("read of snapshot " + name + " of " + volumeId + " at " + off
                                + " unanswered");
                    }
                    q.awaitCompletion(100_000_000L);
                }
                if (res[0] != 0) {
                    throw new IOException("read of snapshot " + name + " of " + volumeId + " at " + off + ": " + res[0]);
                }
                md.update(slice.asByteBuffer());
                decodeInto(slice, off / BLOCK, seqs);
            }
        } finally {
            store.snapshots().close(view);
        }
        return new Image(seqs, md.digest());
    }

    /** The sequence each block of {@code img} holds (see {@link BlockStamps#decode}). */
    static long[] sequences(MemorySegment img, int blocks) {
        long[] out = new long[blocks];
        decodeInto(img, 0, out);
        return out;
    }

    private static void decodeInto(MemorySegment chunk, long firstBlock, long[] out) {
        for (long i = 0; i < chunk.byteSize() / BLOCK && firstBlock + i < out.length; i++) {
            out[(int) (firstBlock + i)] = BlockStamps.decode(chunk, i * BLOCK, firstBlock + i);
        }
    }

    /** The summary line's fields. */
    String figures() {
        int refused = 0, requestsFailed = 0, thinned = 0;
        for (SnapshotTaker t : takers) {
            refused += t.refused.get();
            requestsFailed += t.requestsFailed.get();
            thinned += t.thinned.get();
        }
        return String.format(" snapshots_taken=%d snapshots_checked=%d snapshots_failed=%d snapshots_refused=%d "
                        + "snapshot_requests_failed=%d snapshots_thinned=%d snapshot_images=%d "
                        + "snapshot_copies_missing=%d(in_sync_by_record=%d)", taken, checked, failed, refused,
                requestsFailed, thinned, images, missing, missingInSync);
    }

    /** Why requests were refused or failed, per reason, over every volume. */
    String reasons() {
        Map<String, Integer> all = new java.util.TreeMap<>();
        for (SnapshotTaker t : takers) {
            t.reasons.forEach((k, v) -> all.merge(k, v, Integer::sum));
        }
        return all.toString();
    }
}
