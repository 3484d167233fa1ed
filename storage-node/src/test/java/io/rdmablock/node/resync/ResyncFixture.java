package io.rdmablock.node.resync;

import io.rdmablock.node.replication.ForwardLink;
import io.rdmablock.node.replication.ForwardQueue;
import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.node.replication.SentCommand;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A primary with fake secondaries for resync and verify tests: the primary's store and each copy are byte arrays;
 * a copy's queues execute WRITE and READ against its array by the keyed SGL's address (the copier's registered
 * buffer or the host queue's buffer), as the secondary's RDMA READ / WRITE would.
 */
final class ResyncFixture implements AutoCloseable {
    static final long VOLUME = 1L << 20;
    static final int REGION = (int) DirtyRegions.DEFAULT_REGION_BYTES;
    static final int LBA = 4096;
    static final long EPOCH = 5;

    final byte[] primary = new byte[(int) VOLUME];
    final Map<String, Copy> copies = new ConcurrentHashMap<>();
    final List<String> calls = new CopyOnWriteArrayList<>();
    final LongAdder copied = new LongAdder();
    /** The node's background budget the resyncs and verifies take from (set before {@link #start}). */
    io.rdmablock.node.qos.BackgroundBudget budget = io.rdmablock.node.qos.BackgroundBudget.ofMib(1000, 1000,
            new io.rdmablock.node.metrics.ForegroundLatency());
    final Path dir;
    /** Local reads by offset, in order. */
    final List<Long> localReads = new CopyOnWriteArrayList<>();
    /** A local read of this offset blocks until {@link #readGate} opens (-1: none). */
    volatile long blockReadAt = -1;
    volatile CountDownLatch readGate = new CountDownLatch(0);
    volatile CountDownLatch readBlocked = new CountDownLatch(1);
    volatile ReplicaSet.Primacy primacy;
    ReplicaSet set;
    Resyncs resyncs;

    ResyncFixture(Path dir) {
        this.dir = dir;
        fill(primary, 1);
    }

    static void fill(byte[] b, int seed) {
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i * 31 + seed * 7 + (i >>> 12));
        }
    }

    /** One fake secondary: its data and its link. */
    final class Copy implements ForwardLink {
        final String node;
        final byte[] data = new byte[(int) VOLUME];
        final AtomicLong copierWriteBytes = new AtomicLong();
        /** Fail the copier's WRITE at this offset (-1 none). */
        volatile long failWriteAt = -1;
        /** Answers of host-queue forwards are held while set. */
        volatile boolean holdForwards;
        final List<Queue> queues = new CopyOnWriteArrayList<>();

        Copy(String node) {
            this.node = node;
        }

        @Override
        public CompletableFuture<ForwardQueue> open(int entries, ProtectionDomain pd, ForwardQueue.Listener l) {
            Queue q = new Queue(this, l);
            queues.add(q);
            return CompletableFuture.completedFuture(q);
        }

        @Override
        public void close() {
        }

        void releaseForwards() {
            holdForwards = false;
            for (Queue q : queues) {
                q.answers.addAll(q.held);
                q.held.clear();
            }
        }
    }

    final class Queue implements ForwardQueue {
        final Copy copy;
        final Listener listener;
        final ConcurrentLinkedQueue<int[]> answers = new ConcurrentLinkedQueue<>();
        final List<int[]> held = new CopyOnWriteArrayList<>();
        volatile boolean copier;
        volatile boolean closed;
        final AtomicInteger forwarded = new AtomicInteger();

        Queue(Copy copy, Listener listener) {
            this.copy = copy;
            this.listener = listener;
        }

        @Override
        public int register(MemorySegment segment) {
            copier = true;
            return 99;
        }

        @Override
        public boolean forward(MemorySegment sqe, long epoch, long dataAddress, int dataLength, int rkey, int lkey, int tag,
                               long nowNs) {
            return execute(SentCommand.forwarded(sqe, epoch, dataAddress, dataLength, rkey, tag), tag);
        }

        @Override
        public boolean submit(io.rdmablock.nvmf.host.NvmCommand command, int tag, long nowNs) {
            return execute(SentCommand.built(command, tag), tag);
        }

        private boolean execute(SentCommand c, int tag) {
            long offset = c.slba() * LBA;
            int length = c.dataLength();
            int status = 0;
            MemorySegment buf = MemorySegment.ofAddress(c.dataAddress()).reinterpret(Math.max(0, length));
            if (c.opcode() == CopyChannel.WRITE && copier && offset == copy.failWriteAt) {
                status = NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR);
            } else if (c.opcode() == CopyChannel.WRITE && length > 0) {
                MemorySegment.copy(buf, 0, MemorySegment.ofArray(copy.data), offset, length);
                if (copier) {
                    copy.copierWriteBytes.addAndGet(length);
                }
            } else if (c.opcode() == CopyChannel.READ) {
                MemorySegment.copy(MemorySegment.ofArray(copy.data), offset, buf, 0, length);
            }
            if (!copier) {
                forwarded.incrementAndGet();
            }
            int[] a = {tag, status};
            if (!copier && copy.holdForwards) {
                held.add(a);
            } else {
                answers.add(a);
            }
            return true;
        }

        @Override
        public boolean isBroken() {
            return closed;
        }

        @Override
        public int poll(long nowNs) {
            int n = 0;
            int[] a;
            while ((a = answers.poll()) != null) {
                listener.forwarded(a[0], a[1]);
                n++;
            }
            return n;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /** The primary's local store over {@link #primary}. */
    LocalStore local() {
        return new LocalStore() {
            @Override
            public void read(long offsetBytes, MemorySegment into) throws IOException {
                localReads.add(offsetBytes);
                if (offsetBytes == blockReadAt) {
                    readBlocked.countDown();
                    try {
                        if (!readGate.await(10, TimeUnit.SECONDS)) {
                            throw new IOException("test read gate never opened");
                        }
                    } catch (InterruptedException e) {
                        throw new IOException(e);
                    }
                }
                MemorySegment.copy(MemorySegment.ofArray(primary), offsetBytes, into, 0, into.byteSize());
            }

            @Override
            public void close() {
            }
        };
    }

    /** Builds the set: secondaries n2.. with these in-sync flags (their data equal to the primary's). */
    ReplicaSet start(boolean... inSync) {
        List<Map.Entry<String, Map.Entry<ForwardLink, Boolean>>> list = new ArrayList<>();
        for (int i = 0; i < inSync.length; i++) {
            Copy c = new Copy("n" + (i + 2));
            System.arraycopy(primary, 0, c.data, 0, primary.length);
            copies.put(c.node, c);
            list.add(Map.entry(c.node, Map.entry(c, inSync[i])));
        }
        set = new ReplicaSet("vol", VOLUME, dir, EPOCH, 1, list, dropper());
        resyncs = new Resyncs(set, context());
        return set;
    }

    Resyncs.Context context() {
        return new Resyncs.Context("n1", budget, this::local, 1, LBA, 2_000_000_000L,
                io.rdmablock.node.replication.ReplicatedWrites.DEFAULT_OPEN_TIMEOUT_NS, 60_000_000_000L, 5_000_000_000L, copied);
    }

    ReplicaSet.Dropper dropper() {
        return new ReplicaSet.Dropper() {
            @Override
            public long markStale(String node, long epoch) {
                calls.add("stale " + node + "@" + epoch);
                return epoch + 1;
            }

            @Override
            public void markSyncing(String node, long epoch) {
                calls.add("syncing " + node + "@" + epoch);
            }

            @Override
            public long markInSync(String node, long epoch) {
                calls.add("in-sync " + node + "@" + epoch);
                return epoch + 1;
            }

            @Override
            public ReplicaSet.Primacy primacy() {
                ReplicaSet.Primacy p = primacy;
                if (p == null) {
                    throw new IllegalStateException("unreachable");
                }
                return p;
            }
        };
    }

    boolean regionEquals(Copy c, int region) {
        int from = region * REGION;
        return Arrays.equals(primary, from, from + REGION, c.data, from, from + REGION);
    }

    static void await(BooleanSupplier done, long boundMs, String what, Runnable each) {
        long deadline = System.nanoTime() + boundMs * 1_000_000L;
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            each.run();
            Thread.onSpinWait();
        }
    }

    static void await(BooleanSupplier done, long boundMs, String what) {
        await(done, boundMs, what, () -> java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L));
    }

    @Override
    public void close() {
        readGate.countDown();
        if (set != null) {
            set.close();
        }
    }
}
