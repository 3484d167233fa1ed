package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;

/**
 * What the cluster map and snapshots cost at the store, in one run (docs/snapshots.md, "Figures"): for a flat
 * volume and mapped volumes of each cluster size, 4K random read and write at QD32 (IOPS) and QD1 (p50), then on the
 * mapped ones the first writes after a snapshot (4K random QD32 and 1M sequential QD4, as ratios to the same without
 * a snapshot), a QD32 4K random-write stream while a snapshot is taken every second (p50/p99/max against the same
 * stream without), and the delete of a snapshot that holds the whole volume alone. Every volume is filled first, so
 * reads reach the disk and writes overwrite. Not a test: figures depend on the machine; run through
 * {@code ops/bench/snapshots}.
 *
 * <p>Arguments: dataDir backend(io_uring|threadpool) sizeBytes seconds clusterBytes... (0 = flat).
 */
public final class SnapshotBench {
    private static final int QD = 32;

    private SnapshotBench() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        IoBackend backend = StoreOptions.parseBackend(args[1]);
        long size = Long.parseLong(args[2]);
        double secs = Double.parseDouble(args[3]);
        double flatWrite = 0;
        double flatRead = 0;
        for (int i = 4; i < args.length; i++) {
            int cluster = Integer.parseInt(args[i]);
            Path d = dir.resolve("c" + cluster);
            deleteTree(d);
            try (VolumeStore store = VolumeStore.open(d, StoreOptions.defaults().withBackend(backend)
                    .withClusterBytes(cluster)); Arena arena = Arena.ofShared()) {
                StoreVolume v = store.create(new VolumeSpec("bench", "bench", size, 4096, Set.of()));
                String name = cluster == 0 ? "flat" : (cluster >> 10) + "K";
                Load load = new Load(store, v, arena);
                load.sequential(1 << 20, 8, size, true); // fill: every cluster allocated, every block on disk
                double rr = load.random(false, QD, secs).iops();
                Load.Result rw = load.random(true, QD, secs);
                double r1 = load.random(false, 1, secs / 2).p(0.50);
                double w1 = load.random(true, 1, secs / 2).p(0.50);
                if (cluster == 0) {
                    flatRead = rr;
                    flatWrite = rw.iops();
                }
                System.out.printf("%-5s steady: randread QD32 %.0f IOPS (%.2fx flat), randwrite QD32 %.0f IOPS "
                                + "(%.2fx flat), QD1 p50 read %.0f us, write %.0f us%n", name, rr, ratio(rr, flatRead),
                        rw.iops(), ratio(rw.iops(), flatWrite), r1 / 1e3, w1 / 1e3);
                if (cluster == 0) {
                    continue;
                }
                store.snapshots().create("bench", "first");
                Load.Result after = load.random(true, QD, secs);
                store.snapshots().delete("bench", "first");
                double seqBase = load.sequential(1 << 20, 4, Math.min(size, 512L << 20), false).mibps(1 << 20);
                store.snapshots().create("bench", "seq");
                double seqAfter = load.sequential(1 << 20, 4, Math.min(size, 512L << 20), false).mibps(1 << 20);
                store.snapshots().delete("bench", "seq");
                System.out.printf("%-5s first writes after a snapshot: 4K randwrite QD32 %.0f IOPS (%.2fx of %.0f "
                                + "without), p99 %.0f us; 1M seqwrite QD4 %.0f MiB/s (%.2fx of %.0f without)%n", name,
                        after.iops(), after.iops() / rw.iops(), rw.iops(), after.p(0.99) / 1e3, seqAfter, seqAfter / seqBase,
                        seqBase);
                Load.Result quiet = load.random(true, QD, Math.max(secs, 5));
                int seconds = (int) Math.max(secs, 5);
                long[] takes = new long[seconds];
                // snapshots come from another thread, as on a node (the heartbeat thread, never a poller): the
                // barrier waits for writes in flight, which only the load thread's reaping completes
                Thread snapper = Thread.ofPlatform().start(() -> {
                    try {
                        for (int k = 0; k < seconds; k++) {
                            Thread.sleep(1000);
                            long t0 = System.nanoTime();
                            store.snapshots().create("bench", "b" + k);
                            takes[k] = System.nanoTime() - t0;
                            if (k > 0) {
                                store.snapshots().delete("bench", "b" + (k - 1));
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                Load.Result busy = load.random(true, QD, seconds + 0.5);
                snapper.join();
                for (var s : store.snapshots().list("bench")) {
                    store.snapshots().delete("bench", s.name());
                }
                long maxTake = Arrays.stream(takes).max().orElse(0);
                System.out.printf("%-5s snapshot every 1 s under 4K randwrite QD32: p50 %.0f us, p99 %.0f us "
                                + "(+%.0f us against %.0f without), max %.1f ms; IOPS %.2fx; create max %.2f ms%n", name,
                        busy.p(0.50) / 1e3, busy.p(0.99) / 1e3, (busy.p(0.99) - quiet.p(0.99)) / 1e3,
                        quiet.p(0.99) / 1e3, busy.max() / 1e6, busy.iops() / quiet.iops(), maxTake / 1e6);
                store.snapshots().create("bench", "whole");
                load.sequential(1 << 20, 8, size, true); // every cluster redirected: the snapshot holds all alone
                long exclusive = store.snapshots().find("bench", "whole").orElseThrow().exclusiveBytes();
                long t0 = System.nanoTime();
                store.snapshots().delete("bench", "whole");
                double ms = (System.nanoTime() - t0) / 1e6;
                System.out.printf("%-5s delete of a snapshot holding %d MiB alone: %.1f ms, data bytes copied 0 "
                        + "(map only; its clusters are punched by the map worker after the grace)%n", name,
                        exclusive >> 20, ms);
            }
        }
    }

    private static double ratio(double x, double base) {
        return base == 0 ? 1 : x / base;
    }

    /** Deletes a directory tree (a previous run's data). */
    private static void deleteTree(Path p) throws java.io.IOException {
        if (!java.nio.file.Files.exists(p)) {
            return;
        }
        try (var s = java.nio.file.Files.walk(p)) {
            for (Path f : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.delete(f);
            }
        }
    }
}
