package io.rdmablock.node.failover;

import io.rdmablock.node.target.VolumeIo;
import io.rdmablock.node.target.Request;
import io.rdmablock.node.store.StoreOptions;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The secondary's epoch fence as a barrier (docs/failover.md, "Fencing on a secondary"): {@link EpochFencedVolumeIo}
 * over a real {@link VolumeStore} (the epoch is persisted) and a local copy whose commands complete only when the test
 * says so ({@link HeldIo}), so every interleaving here is deterministic except in the multi-threaded case.
 */
class EpochFencedVolumeIoTest {
    static final int RC = NvmeStatus.generic(NvmeStatus.SC_RESERVATION_CONFLICT);
    static final int ENTRIES = 16;

    Path dir;
    VolumeStore store;
    final Arena arena = Arena.ofShared();

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "epoch-fence-");
        store = VolumeStore.open(dir, StoreOptions.defaults());
        store.create(new VolumeSpec("vol1", "vol1", 8L << 20, 512, Set.of("*")));
        store.create(new VolumeSpec("vol2", "vol2", 8L << 20, 512, Set.of("*")));
        store.raiseEpoch("vol1", 1);
        store.raiseEpoch("vol2", 1);
    }

    @AfterEach
    void tearDown() throws Exception {
        store.close();
        arena.close();
    }

    /**
     * The bug: an epoch-1 write admitted on queue A is held in the store; the new primary's activation FLUSH of epoch
     * 2 arrives on queue B. Before the fix the FLUSH ran and was answered at once, and the old write landed after it.
     * Now the FLUSH is answered only after the old write completed.
     */
    @Test
    void shouldAnswerTheRaisingFlushOnlyAfterTheOlderWriteCompleted() {
        Queue a = new Queue("vol1", 1);
        Queue b = new Queue("vol1", 2);
        Request oldWrite = a.submit(Opcodes.IO_WRITE, 1);
        assertEquals(VolumeIo.IN_FLIGHT, a.lastStart);
        Request flush = b.submit(Opcodes.IO_FLUSH, 2);
        assertEquals(VolumeIo.IN_FLIGHT, b.lastStart);
        assertEquals(2, store.epoch("vol1"), "the raise is persisted at admission, before anything of epoch 2 runs");

        for (int i = 0; i < 5; i++) {
            b.pollAll();
            b.local.completeAll(0); // whatever the store got on B completes at once
            b.pollAll();
        }
        assertEquals(0, b.local.started.size() + b.answered.size(), "FLUSH neither executed nor answered while "
                + "an epoch-1 write is in the store: started=" + b.local.started + ", answered=" + b.answered);
        assertEquals(1, b.io.inFlight(), "the parked FLUSH counts in flight (the poller keeps polling)");

        a.local.completeAll(0);
        a.pollAll();
        assertEquals(List.of(oldWrite), a.answered.keySet().stream().toList());
        long oldWriteDone = a.local.completedAt.get(oldWrite);

        b.pollAll(); // the barrier passed: the FLUSH starts
        assertEquals(List.of(flush), b.local.started);
        b.local.completeAll(0);
        b.pollAll();
        assertEquals(0, b.answered.get(flush));
        assertTrue(b.answeredAt.get(flush) > oldWriteDone, "FLUSH answered after the old write completed");
    }

    @Test
    void shouldRefuseAnOlderEpochArrivingAfterTheRaiseOnAnyQueue() {
        Queue a = new Queue("vol1", 1);
        Queue b = new Queue("vol1", 2);
        Request held = a.submit(Opcodes.IO_WRITE, 1);
        b.submit(Opcodes.IO_FLUSH, 2); // raises, parked behind `held`
        a.submit(Opcodes.IO_WRITE, 1);
        assertEquals(RC, a.lastStart, "epoch 1 after the raise to 2: reservation conflict, nothing touched");
        b.submit(Opcodes.IO_WRITE_ZEROES, 1);
        assertEquals(RC, b.lastStart);
        assertEquals(List.of(held), a.local.started, "only the write admitted before the raise reached the store");

        Request w2 = a.submit(Opcodes.IO_WRITE, 2); // epoch 2 on queue A: parked behind the same barrier
        assertEquals(VolumeIo.IN_FLIGHT, a.lastStart);
        assertEquals(List.of(held), a.local.started);
        a.local.completeAll(0);
        a.pollAll(); // `held` completes and exits; w2's barrier passes in the next round
        a.pollAll();
        assertEquals(List.of(held, w2), a.local.started);
    }

    @Test
    void shouldRefuseAParkedCommandWhoseEpochIsSupersededBeforeItRan() {
        Queue a = new Queue("vol1", 1);
        Queue b = new Queue("vol1", 2);
        a.submit(Opcodes.IO_WRITE, 1); // held
        Request parked2 = b.submit(Opcodes.IO_WRITE, 2);
        Request flush3 = b.submit(Opcodes.IO_FLUSH, 3);
        b.pollAll();
        assertEquals(RC, b.answered.get(parked2), "epoch 2 superseded by 3 before it could run: refused");
        assertEquals(0, b.local.started.size());
        a.local.completeAll(0);
        a.pollAll();
        b.pollAll();
        assertEquals(List.of(flush3), b.local.started, "epoch 3 runs once epochs 1 and 2 drained");
        assertEquals(3, store.epoch("vol1"));
    }

    /**
     * A write of epoch 1 that the store never answers: the raise to 2 on vol1 waits (and keeps waiting, the poller
     * is not blocked), READ on vol1 and every command of vol2, raised to 2 as well on the same thread, run at once.
     */
    @Test
    void shouldDelayTheRaiseBehindAStuckCommandButNoOtherVolume() {
        Queue a = new Queue("vol1", 1);
        Queue b = new Queue("vol1", 2);
        Queue other = new Queue("vol2", 1);
        a.submit(Opcodes.IO_WRITE, 1); // never completes
        Request flush = b.submit(Opcodes.IO_FLUSH, 2);
        Request read = b.submit(Opcodes.IO_READ, 0);
        Request otherFlush = other.submit(Opcodes.IO_FLUSH, 2);
        Request otherWrite = other.submit(Opcodes.IO_WRITE, 2);

        long t0 = System.nanoTime();
        for (int i = 0; i < 1000; i++) {
            a.pollAll();
            b.pollAll();
            other.pollAll();
            b.local.completeAll(0);
            other.local.completeAll(0);
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 2000, "1000 polling rounds took " + ms + " ms: a waiting command must not block the poller");
        assertTrue(!b.answered.containsKey(flush) && !b.local.started.contains(flush), "vol1's raise waits");
        assertEquals(0, b.answered.get(read), "READ is not fenced");
        assertEquals(0, other.answered.get(otherFlush), "vol2 is not held by vol1's stuck write");
        assertEquals(0, other.answered.get(otherWrite));
        assertEquals(2, store.epoch("vol2"));

        a.io.close(); // the stuck write is still in the store after the bounded close: its epoch stays counted
        for (int i = 0; i < 10; i++) {
            b.pollAll();
        }
        assertTrue(!b.local.started.contains(flush), "a write that may still land keeps the barrier closed");
    }

    @Test
    void shouldReleaseTheBarrierWhenAQueueClosesWithParkedOrDrainedCommands() {
        Queue a = new Queue("vol1", 1);
        Queue b = new Queue("vol1", 2);
        a.submit(Opcodes.IO_WRITE, 1);
        b.submit(Opcodes.IO_WRITE, 2);
        a.local.completeAll(0); // completed in the store, never reaped: close drains it
        a.io.close();
        Queue c = new Queue("vol1", 3);
        Request w = c.submit(Opcodes.IO_WRITE, 2);
        b.io.close(); // its parked epoch-2 write never ran: exits too
        c.pollAll();
        assertEquals(List.of(w), c.local.started);
    }

    /**
     * Four poller threads, each with its own queue on vol1, write under the epoch a "primary" announces while a fifth
     * thread raises it (by a FLUSH on its own queue) 200 times. The store records every start: no command may reach it
     * while a command of a lower epoch is in it, nor after a command of a higher epoch reached it.
     */
    @Test
    void shouldKeepTheBarrierAcrossConcurrentQueues() throws Exception {
        AtomicLong primaryEpoch = new AtomicLong(1);
        Map<Long, AtomicInteger> inStore = new ConcurrentHashMap<>();
        AtomicLong maxStarted = new AtomicLong();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger started = new AtomicInteger();
        List<String> firstViolation = java.util.Collections.synchronizedList(new ArrayList<>());
        StoreObserver observer = (epoch, begin) -> {
            if (!begin) {
                inStore.get(epoch).decrementAndGet();
                return;
            }
            started.incrementAndGet();
            inStore.computeIfAbsent(epoch, e -> new AtomicInteger()).incrementAndGet();
            for (Map.Entry<Long, AtomicInteger> e : inStore.entrySet()) {
                if (e.getKey() < epoch && e.getValue().get() > 0) {
                    violations.incrementAndGet();
                    firstViolation.add("epoch " + epoch + " started while " + e.getValue() + " of " + e.getKey());
                }
            }
            if (maxStarted.accumulateAndGet(epoch, Math::max) > epoch) {
                violations.incrementAndGet();
                firstViolation.add("epoch " + epoch + " started after epoch " + maxStarted.get());
            }
        };
        int threads = 4;
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger stop = new AtomicInteger();
        List<Thread> ts = new ArrayList<>();
        List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < threads; t++) {
            int qid = t + 1;
            Thread th = new Thread(() -> {
                try {
                    Queue q = new Queue("vol1", qid);
                    q.local.observer = observer;
                    SplittableRandom rnd = new SplittableRandom(qid);
                    go.await();
                    while (stop.get() == 0) {
                        if (q.free() > 0) {
                            q.submit(Opcodes.IO_WRITE, primaryEpoch.get());
                        }
                        q.local.completeSome(rnd, 0);
                        q.pollAll();
                        q.answered.clear();
                    }
                    while (q.io.inFlight() > 0) {
                        q.local.completeAll(0);
                        q.pollAll();
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "poller-" + qid);
            th.start();
            ts.add(th);
        }
        Queue raiser = new Queue("vol1", 99);
        raiser.local.observer = observer;
        go.countDown();
        for (int e = 2; e <= 201; e++) {
            primaryEpoch.set(e);
            Request f = raiser.submit(Opcodes.IO_FLUSH, e);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!raiser.answered.containsKey(f)) {
                assertTrue(System.nanoTime() < deadline, "FLUSH of epoch " + e + " never answered");
                raiser.pollAll();
                raiser.local.completeAll(0);
                Thread.onSpinWait();
            }
            assertEquals(0, raiser.answered.remove(f));
        }
        stop.set(1);
        for (Thread th : ts) {
            th.join(10_000);
        }
        assertTrue(errors.isEmpty(), "errors: " + errors);
        assertEquals(0, violations.get(), "barrier violations, first: " + firstViolation.stream().limit(3).toList());
        assertTrue(started.get() > 400, "too little traffic to mean anything: " + started.get());
        assertEquals(201, store.epoch("vol1"));
    }

    /** Sees each command the local copy starts (begin) and completes. */
    interface StoreObserver {
        void seen(long epoch, boolean begin);
    }

    /** One queue: its requests, the fenced I/O over a {@link HeldIo}, and what was answered. */
    final class Queue {
        final HeldIo local = new HeldIo();
        final EpochFencedVolumeIo io;
        final ArrayDeque<Request> free = new ArrayDeque<>();
        final Map<Request, Integer> answered = new HashMap<>();
        final Map<Request, Long> answeredAt = new HashMap<>();
        final VolumeIo.Completions sink = (r, status) -> {
            answered.put(r, status);
            answeredAt.put(r, System.nanoTime());
            free.add(r);
        };
        int lastStart;

        Queue(String volumeId, int qid) {
            io = new EpochFencedVolumeIo(local, store, volumeId, qid, ENTRIES);
            for (int i = 0; i < ENTRIES; i++) {
                Request r = new Request(i, arena.allocate(4096, 4096), 0, 0, 0, 0, arena.allocate(16), 0);
                r.sqe = arena.allocate(64);
                free.add(r);
            }
        }

        int free() {
            return free.size();
        }

        /** Starts one command of {@code opcode} carrying {@code epoch}; answered at once unless IN_FLIGHT. */
        Request submit(int opcode, long epoch) {
            Request r = free.remove();
            r.opcode = opcode;
            SqeDescriptor.cdw23(r.sqe, epoch);
            lastStart = io.start(r, System.nanoTime());
            if (lastStart != VolumeIo.IN_FLIGHT) {
                sink.completed(r, lastStart);
            }
            return r;
        }

        void pollAll() {
            io.poll(sink, ENTRIES, System.nanoTime());
        }
    }

    /** A local copy whose commands complete when the test says ({@link #completeAll}); poller thread only. */
    static final class HeldIo implements VolumeIo {
        final List<Request> started = new ArrayList<>();
        final ArrayDeque<Request> inStore = new ArrayDeque<>();
        final ArrayDeque<Request> done = new ArrayDeque<>();
        final Map<Request, Long> completedAt = new HashMap<>();
        final Map<Request, Integer> statusOf = new HashMap<>();
        StoreObserver observer;

        @Override
        public int start(Request r, long nowNs) {
            if (observer == null) {
                started.add(r);
            } else if (r.opcode != Opcodes.IO_READ) {
                observer.seen(r.epoch(), true);
            }
            inStore.add(r);
            return IN_FLIGHT;
        }

        void completeAll(int status) {
            while (!inStore.isEmpty()) {
                complete(inStore.remove(), status);
            }
        }

        void completeSome(SplittableRandom rnd, int status) {
            int n = inStore.size();
            for (int i = 0; i < n; i++) {
                Request r = inStore.remove();
                if (rnd.nextInt(3) == 0) {
                    complete(r, status);
                } else {
                    inStore.add(r);
                }
            }
        }

        private void complete(Request r, int status) {
            if (observer != null && r.opcode != Opcodes.IO_READ) {
                observer.seen(r.epoch(), false);
            }
            completedAt.put(r, System.nanoTime());
            statusOf.put(r, status);
            done.add(r);
        }

        @Override
        public int poll(Completions sink, int max, long nowNs) {
            int n = 0;
            while (!done.isEmpty() && n < max) {
                Request r = done.remove();
                sink.completed(r, statusOf.remove(r));
                n++;
            }
            return n;
        }

        @Override
        public int inFlight() {
            return inStore.size() + done.size();
        }

        /** As a store queue's close: drops what completed; what the store still holds stays in flight. */
        @Override
        public void close() {
            done.clear();
        }
    }
}
