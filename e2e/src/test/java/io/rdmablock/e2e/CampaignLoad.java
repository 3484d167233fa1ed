package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static io.rdmablock.e2e.BlockStamps.BLOCK;
import static io.rdmablock.e2e.BlockStamps.encode;

/**
 * {@link FailoverCampaign}'s load on one volume: {@link AckedWriteModel#LANES} writers, two readers checking every
 * read against the model, a watcher of the management record (primaries per epoch); and the full read-back
 * ({@link #verify}).
 */
final class CampaignLoad {
    private final NodeCluster cluster;
    final String name;
    volatile BlockDevice dev;
    final AckedWriteModel model;
    /** Every write with its issue and acknowledgement ticks, for the snapshot checks ({@link SnapshotChecker}). */
    final SnapshotHistory history;
    final IoPause pause = new IoPause();
    final Map<Long, Set<String>> primariesByEpoch = new ConcurrentHashMap<>();
    final List<Thread> threads = new ArrayList<>();
    volatile boolean stopping;
    FaultKind lastKind;

    CampaignLoad(NodeCluster cluster, String name, BlockDevice dev, AckedWriteModel model) {
        this.cluster = cluster;
        this.name = name;
        this.dev = dev;
        this.model = model;
        this.history = new SnapshotHistory(AckedWriteModel.LANES, model.perLane);
    }

    void start() {
        for (int lane = 0; lane < AckedWriteModel.LANES; lane++) {
            int l = lane;
            threads.add(Thread.ofPlatform().name("chaos-writer-" + l).daemon().start(() -> writer(l)));
        }
        for (int r = 0; r < 2; r++) {
            int rr = r;
            threads.add(Thread.ofPlatform().name("chaos-reader-" + r).daemon().start(() -> reader(rr)));
        }
        threads.add(Thread.ofPlatform().name("chaos-record").daemon().start(this::watchRecord));
    }

    /** Runs {@code taker} on a thread of this load (stopped with it). */
    void startTaker(SnapshotTaker taker) {
        threads.add(Thread.ofPlatform().name("chaos-snapshots").daemon().start(taker::run));
    }

    void stop() {
        stopping = true;
        for (Thread t : threads) {
            try {
                t.join(60_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void watchRecord() {
        while (!stopping) {
            try {
                Volume v = cluster.client().getVolume(name);
                primariesByEpoch.computeIfAbsent(v.epoch(), e -> ConcurrentHashMap.newKeySet())
                        .add(Integer.toString(primaryOf(v)));
            } catch (RuntimeException e) {
                // the record is read again in 200 ms
            }
            sleep(200);
        }
    }

    private void writer(int lane) {
        Random r = new Random(1000 + lane);
        BlockDevice d = dev;
        MemorySegment buf = d.allocateBuffer(4L * BLOCK);
        long seq = 0;
        while (!stopping) {
            if (d != dev) { // reopened
                d = dev;
                buf = d.allocateBuffer(4L * BLOCK);
            }
            int n = 1 + r.nextInt(4);
            long first = (long) lane * model.perLane + r.nextInt(model.perLane - n + 1);
            seq++;
            for (int b = 0; b < n; b++) {
                model.issued.accumulateAndGet((int) (first + b), seq, Math::max);
                encode(buf, (long) b * BLOCK, first + b, lane, seq);
            }
            history.issue(lane, seq, first, n);
            long t0 = System.nanoTime();
            try {
                d.write(first * BLOCK, buf.asSlice(0, (long) n * BLOCK), false).get(40, TimeUnit.SECONDS);
                history.acked(lane, seq);
                long now = System.nanoTime();
                for (int b = 0; b < n; b++) {
                    model.acked.set((int) (first + b), seq);
                    model.ackedAt.set((int) (first + b), now);
                }
                model.writesAcked.incrementAndGet();
                model.noteAck(t0);
                pause.complete(now);
            } catch (TimeoutException e) {
                model.writeFailed("write of blocks " + first + "+" + n + " outstanding for 40 s");
                buf = d.allocateBuffer(4L * BLOCK); // the node may still touch the old buffer: never reuse it
            } catch (ExecutionException | RuntimeException e) {
                model.writeFailed("write of blocks " + first + "+" + n + ": " + rootMessage(e));
                sleep(50);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void reader(int id) {
        Random r = new Random(2000 + id);
        BlockDevice d = dev;
        MemorySegment buf = d.allocateBuffer(4L * BLOCK);
        long[] ackedBefore = new long[4];
        long[] seenBefore = new long[4];
        while (!stopping) {
            if (d != dev) {
                d = dev;
                buf = d.allocateBuffer(4L * BLOCK);
            }
            int n = 1 + r.nextInt(4);
            long first = r.nextInt(model.blocks - n + 1);
            for (int b = 0; b < n; b++) {
                ackedBefore[b] = model.acked.get((int) (first + b));
                seenBefore[b] = model.observed.get((int) (first + b));
            }
            try {
                d.read(first * BLOCK, buf.asSlice(0, (long) n * BLOCK)).get(40, TimeUnit.SECONDS);
                pause.complete(System.nanoTime());
                for (int b = 0; b < n; b++) {
                    model.checkRead(buf, (long) b * BLOCK, first + b, ackedBefore[b], seenBefore[b], "read");
                }
            } catch (TimeoutException e) {
                buf = d.allocateBuffer(4L * BLOCK);
            } catch (ExecutionException | RuntimeException e) {
                sleep(50);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    record Check(long blocks, long lost, long stale, long corrupt, String first, String error) {
        boolean clean() {
            return lost == 0 && stale == 0 && corrupt == 0 && error == null;
        }

        @Override
        public String toString() {
            if (error != null) {
                return "read-back failed: " + error;
            }
            return clean() ? blocks + " blocks, each its last acknowledged value or later"
                    : blocks + " blocks, lost " + lost + ", stale " + stale + ", corrupt " + corrupt + " (first: "
                    + first + ")";
        }
    }

    /** Reads every block of the load's regions (64 at a time, each read bounded and retried) against the model. */
    static Check verify(CampaignLoad s) {
        AckedWriteModel m = s.model;
        BlockDevice d = s.dev;
        MemorySegment buf = d.allocateBuffer(64L * BLOCK);
        long lost = 0, stale = 0, corrupt = 0;
        String first = null;
        long[] acked = new long[64];
        long[] seen = new long[64];
        for (int b = 0; b < m.blocks; b += 64) {
            int n = Math.min(64, m.blocks - b);
            boolean read = false;
            String error = null;
            for (int attempt = 0; attempt < 3 && !read; attempt++) {
                for (int i = 0; i < n; i++) {
                    acked[i] = m.acked.get(b + i);
                    seen[i] = m.observed.get(b + i);
                }
                try {
                    d.read((long) b * BLOCK, buf.asSlice(0, (long) n * BLOCK)).get(30, TimeUnit.SECONDS);
                    read = true;
                } catch (TimeoutException e) {
                    buf = d.allocateBuffer(64L * BLOCK);
                    error = "read of blocks " + b + "+" + n + " outstanding for 30 s";
                } catch (Exception e) {
                    error = "read of blocks " + b + "+" + n + ": " + rootMessage(e);
                    sleep(500);
                }
            }
            if (!read) {
                return new Check(b, lost, stale, corrupt, first, error);
            }
            for (int i = 0; i < n; i++) {
                String p = m.checkRead(buf, (long) i * BLOCK, b + i, acked[i], seen[i], "read-back");
                if (p != null) {
                    if (p.startsWith("lost")) {
                        lost++;
                    } else if (p.startsWith("stale")) {
                        stale++;
                    } else {
                        corrupt++;
                    }
                    if (first == null) {
                        first = p;
                    }
                }
            }
        }
        return new Check(m.blocks, lost, stale, corrupt, first, null);
    }

    // ---- the model -------------------------------------------------------------------------------------------

    static int primaryOf(Volume v) {
        return NodeCluster.index(v.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY).findFirst()
                .map(VolumeCopy::nodeId).orElse(v.nodeId()));
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms); // load pacing and back-off after an error, not a wait for a condition
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String rootMessage(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
