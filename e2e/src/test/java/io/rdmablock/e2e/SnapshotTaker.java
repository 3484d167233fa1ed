package io.rdmablock.e2e;

import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotState;
import io.rdmablock.mgmt.client.Volume;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import static io.rdmablock.e2e.SnapshotHistory.NEVER;

/**
 * Takes a snapshot of the campaign's volume every {@code everyMs} while its load runs (its own thread), recording
 * for each request the ticks of {@link SnapshotHistory} around it: {@code request} just before the POST, {@code
 * complete} once the snapshot was seen ready. A request refused (409: a copy not in sync, ...) or failed (503, a
 * timeout during a failover) is counted, not an error; its snapshot may still exist and become ready later (then the
 * audit checks it with the tick of the listing that saw it ready as its upper bound). A volume holds at most 32
 * snapshots (any state): at {@link #CAP} the taker deletes the ready one whose neighbours are closest in time (so the
 * ones kept stay spread over the run), counted {@code thinned} and not checked.
 */
final class SnapshotTaker {
    static final int CAP = 28;
    private static final long READY_WAIT_MS = 20_000;

    /** One create request. Written by the taker's thread, read by the audit after it stopped. */
    static final class Taken {
        final String name;
        final long request;
        volatile long complete = NEVER;
        /**
         * The primary that reported it (the record's primary read just after it was seen ready; -1: not read). A
         * promotion in between would name a copy that was in sync at the cut too.
         */
        volatile int primary = -1;
        /** Copies in sync in the record both before the request and once ready (same epoch). */
        volatile Set<Integer> inSync = Set.of();
        volatile boolean thinned;
        volatile String outcome = "pending";

        Taken(String name, long request) {
            this.name = name;
            this.request = request;
        }
    }

    private final MgmtClient client;
    private final String volume;
    private final SnapshotHistory history;
    private final long everyMs;
    private final BooleanSupplier stopping;
    final Map<String, Taken> taken = new ConcurrentHashMap<>();
    final AtomicInteger refused = new AtomicInteger();
    final AtomicInteger requestsFailed = new AtomicInteger();
    final AtomicInteger thinned = new AtomicInteger();
    final Map<String, Integer> reasons = new ConcurrentHashMap<>();
    private int serial;

    SnapshotTaker(MgmtClient client, String volume, SnapshotHistory history, long everyMs, BooleanSupplier stopping) {
        this.client = client;
        this.volume = volume;
        this.history = history;
        this.everyMs = everyMs;
        this.stopping = stopping;
    }

    void run() {
        long next = System.nanoTime() + everyMs * 1_000_000;
        while (!stopping.getAsBoolean()) {
            if (System.nanoTime() < next) {
                CampaignLoad.sleep(50);
                continue;
            }
            next = System.nanoTime() + everyMs * 1_000_000;
            try {
                once();
            } catch (RuntimeException e) { // the listing or the record before the request: nothing was asked
                reasons.merge("not asked (" + (e instanceof MgmtException m ? m.status() + " " + m.type()
                        : e.getClass().getSimpleName()) + ")", 1, Integer::sum);
            }
        }
    }

    private void once() {
        List<Snapshot> list = client.listSnapshots(volume);
        noteReady(list);
        if (list.size() >= CAP && !thin(list)) {
            return;
        }
        Volume before = client.getVolume(volume);
        Taken t = new Taken("cs" + (++serial), history.tick());
        taken.put(t.name, t);
        Snapshot s;
        try {
            s = client.createSnapshot(volume, t.name);
            long deadline = System.nanoTime() + READY_WAIT_MS * 1_000_000;
            while (s.state() != SnapshotState.READY && System.nanoTime() < deadline && !stopping.getAsBoolean()) {
                CampaignLoad.sleep(200); // 202 creating: the primary has not reported it yet
                s = client.getSnapshot(volume, t.name);
            }
        } catch (MgmtException e) {
            (e.status() == 409 ? refused : requestsFailed).incrementAndGet();
            t.outcome = e.status() + " " + e.type();
            reason(e);
            return;
        } catch (RuntimeException e) {
            requestsFailed.incrementAndGet();
            t.outcome = "failed: " + CampaignLoad.rootMessage(e);
            reason(e);
            return;
        }
        if (s.state() == SnapshotState.READY) {
            t.complete = history.tick();
            t.outcome = "ready";
            try {
                Volume after = client.getVolume(volume);
                t.primary = CampaignLoad.primaryOf(after);
                if (after.epoch() == before.epoch()) {
                    t.inSync = inSync(before);
                    t.inSync.retainAll(inSync(after));
                }
            } catch (RuntimeException e) {
                // no sample: no copy is required to hold it
            }
        } else {
            t.outcome = "still " + s.state().toString().toLowerCase() + " after " + READY_WAIT_MS + " ms";
        }
    }

    private static Set<Integer> inSync(Volume v) {
        return v.copies().stream().filter(c -> c.state() == CopyState.IN_SYNC)
                .map(c -> NodeCluster.index(c.nodeId())).collect(Collectors.toCollection(
                        java.util.HashSet::new));
    }

    /** Marks the ones a listing shows ready that the taker had not seen ready (their bound: now). */
    void noteReady(List<Snapshot> list) {
        for (Snapshot s : list) {
            Taken t = taken.get(s.name());
            if (t != null && t.complete == NEVER && s.state() == SnapshotState.READY) {
                t.complete = history.tick();
            }
        }
    }

    /** Deletes the ready snapshot whose neighbours are closest (the newest and the oldest are kept); true if done. */
    private boolean thin(List<Snapshot> list) {
        List<Taken> ready = new ArrayList<>();
        for (Snapshot s : list) {
            Taken t = taken.get(s.name());
            if (t != null && s.state() == SnapshotState.READY && !t.thinned) {
                ready.add(t);
            }
        }
        ready.sort(Comparator.comparingLong(t -> t.request));
        if (ready.size() < 3) {
            return false;
        }
        int best = 1;
        for (int i = 2; i < ready.size() - 1; i++) {
            if (ready.get(i + 1).request - ready.get(i - 1).request
                    < ready.get(best + 1).request - ready.get(best - 1).request) {
                best = i;
            }
        }
        Taken victim = ready.get(best);
        client.deleteSnapshot(volume, victim.name);
        victim.thinned = true;
        thinned.incrementAndGet();
        return list.size() - 1 < CAP;
    }

    private void reason(RuntimeException e) {
        String r = e instanceof MgmtException m ? m.status() + " " + m.type() : e.getClass().getSimpleName();
        reasons.merge(r, 1, Integer::sum);
    }
}
