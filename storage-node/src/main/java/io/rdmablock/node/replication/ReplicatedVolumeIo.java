package io.rdmablock.node.replication;

import io.rdmablock.node.target.Request;
import io.rdmablock.node.target.VolumeIo;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The {@link VolumeIo} of one host I/O queue of a volume's primary: READ goes to the local copy only; WRITE, FLUSH,
 * WRITE ZEROES and DATASET MANAGEMENT go to {@link ReplicatedWrites}, which starts them on the local copy and every
 * copy writes go to and hands them back once, with the merged status. The forwarded capsule is the host's own SQE
 * (opcode, nsid, CDW10..CDW15 unchanged) with the view's epoch in CDW2..CDW3 and a keyed SGL naming this request's
 * own registered buffer ({@link Request#dataAddress()}, {@link Request#dataRkey()}): the secondary fetches the
 * payload with RDMA READ, nothing is copied here.
 *
 * <p>Poller thread only; preallocated (a ring of completed slots); no allocation or lock per command.
 */
public final class ReplicatedVolumeIo implements VolumeIo {
    private final VolumeIo local;
    private final ReplicatedWrites writes;
    private final int lbaSize;
    /** Writes completed outside {@link #poll} (within {@link #start}): handed back by the next poll. */
    private final int[] readySlot;
    private final int[] readyStatus;
    private int readyHead;
    private int readyCount;
    private int writesInFlight;
    /** The sink of the current {@link #poll}; null outside it. */
    private Completions outer;
    private final Completions fromLocal = this::localCompleted;
    /** The clock of the current {@link #poll}. */
    private long pollNs;

    /**
     * @param local     the node's own copy's handle of this queue
     * @param set       the volume's copies
     * @param entries   requests of the host queue
     * @param lbaSize   logical block size, bytes (DATASET MANAGEMENT ranges are in blocks)
     * @param timeoutNs replica timeout
     * @param openTimeoutNs least bound of a forward queue's set-up ({@code rdmablock.replica.openTimeoutMs})
     * @param pd        protection domain the host queue's data buffers are registered with (the secondaries RDMA
     *                  READ a forwarded write's payload from there, and the forward queues are created in it)
     * @throws IllegalArgumentException when {@code pd} is null (a queue whose buffers are not registered, e.g. an
     *                                  NVMe/TCP queue on a node without an RDMA device): {@code local} is closed then,
     *                                  and the Fabrics Connect of the queue is refused
     */
    public ReplicatedVolumeIo(VolumeIo local, ReplicaSet set, int entries, int lbaSize, long timeoutNs,
                              long openTimeoutNs, ProtectionDomain pd) {
        if (pd == null) {
            local.close();
            throw new IllegalArgumentException("invalid pd: null (the host queue's data buffers are not registered "
                    + "with a protection domain, so the secondaries cannot read a forwarded write's payload): a "
                    + "replicated volume needs an RDMA-registered queue");
        }
        this.local = local;
        this.lbaSize = lbaSize;
        this.readySlot = new int[entries];
        this.readyStatus = new int[entries];
        this.writes = new ReplicatedWrites(set, entries, entries, timeoutNs, openTimeoutNs, pd, this::writeCompleted,
                this::startLocal);
    }

    /** The local copy's part of the write in {@code slot}, started by {@link ReplicatedWrites} once admitted. */
    private int startLocal(int slot, long nowNs) {
        return local.start(writes.slot(slot).request, nowNs);
    }

    @Override
    public int start(Request r, long nowNs) {
        if (r.opcode() == Opcodes.IO_READ) {
            return local.start(r, nowNs);
        }
        int slot = r.index();
        fill(writes.slot(slot), r);
        int status = writes.begin(slot, nowNs);
        if (status != 0) {
            return status;
        }
        writesInFlight++;
        return IN_FLIGHT;
    }

    /** The command the host sent, as the secondaries get it: its own SQE, its own registered buffer. */
    private void fill(Write w, Request r) {
        w.request = r;
        w.sqe = r.sqe();
        w.dataAddress = r.dataAddress();
        w.dataLength = r.dataLengthBytes();
        w.rkey = r.dataRkey();
        w.lkey = r.dataLkey();
        w.ignoreMinInSync = false;
        switch (r.opcode()) {
            case Opcodes.IO_WRITE, Opcodes.IO_WRITE_ZEROES -> {
                w.offsetBytes = r.offsetBytes();
                w.lengthBytes = r.lengthBytes();
            }
            case Opcodes.IO_DATASET_MANAGEMENT -> dsmSpan(w, r);
            default -> {
                w.offsetBytes = 0;
                w.lengthBytes = 0;
            }
        }
    }

    /** The byte span covering every range of a DATASET MANAGEMENT (16-byte descriptors: attributes, NLB, SLBA). */
    private void dsmSpan(Write w, Request r) {
        MemorySegment ranges = r.data();
        long lo = Long.MAX_VALUE;
        long hi = 0;
        for (int i = 0; ranges != null && i < r.dsmRangeCount(); i++) {
            long blocks = Integer.toUnsignedLong(ranges.get(ValueLayout.JAVA_INT_UNALIGNED, 16L * i + 4));
            long slba = ranges.get(ValueLayout.JAVA_LONG_UNALIGNED, 16L * i + 8);
            if (blocks > 0) {
                lo = Math.min(lo, slba * lbaSize);
                hi = Math.max(hi, (slba + blocks) * lbaSize);
            }
        }
        w.offsetBytes = lo == Long.MAX_VALUE ? 0 : lo;
        w.lengthBytes = lo == Long.MAX_VALUE ? 0 : hi - lo;
    }

    /** The local copy's completions: a READ is the host's; any other command is a replicated write's child. */
    private void localCompleted(Request r, int status) {
        if (r.opcode() == Opcodes.IO_READ) {
            outer.completed(r, status);
        } else {
            writes.localDone(r.index(), status, pollNs);
        }
    }

    private void writeCompleted(int slot, int status) {
        Completions sink = outer;
        if (sink != null) {
            writesInFlight--;
            sink.completed(writes.slot(slot).request, status);
            return;
        }
        int tail = (readyHead + readyCount) % readySlot.length;
        readySlot[tail] = slot;
        readyStatus[tail] = status;
        readyCount++;
    }

    @Override
    public int poll(Completions sink, int max, long nowNs) {
        outer = sink;
        pollNs = nowNs;
        int work = 0;
        try {
            while (readyCount > 0) {
                int slot = readySlot[readyHead];
                int status = readyStatus[readyHead];
                readyHead = (readyHead + 1) % readySlot.length;
                readyCount--;
                writesInFlight--;
                sink.completed(writes.slot(slot).request, status);
                work++;
            }
            work += local.poll(fromLocal, max, nowNs);
            work += writes.poll(nowNs);
        } finally {
            outer = null;
        }
        return work;
    }

    /**
     * Waits for the next event this handle can reap: on the secondaries that owe answers (a replicated write waits
     * for them; with a user-space provider the wait also serves their RDMA READ of the payload), for a quarter of
     * the wait when the local copy has commands in flight too (a READ must not wait long behind a peer); else on the
     * local copy's store. What completes meanwhile is handed back by the next {@link #poll}.
     *
     * <p>Tried and not kept (ops/bench/replication, 2026-12-07): waiting on the local store first (io_uring, which
     * also hands this round's queued commands to the kernel) made R=3 4K QD1 p50 ~10% better, but the primary then
     * served the secondaries' RDMA READs of payloads too long for the capsule later: 1M writes and 4K QD32 fell.
     */
    @Override
    public boolean awaitStore(long timeoutNs) {
        boolean localBusy = local.inFlight() > 0;
        if (writes.awaitPeers(localBusy ? Math.max(1_000L, timeoutNs / 4) : timeoutNs)) {
            return true;
        }
        return localBusy && writes.quiet() && local.awaitStore(timeoutNs);
    }

    @Override
    public int inFlight() {
        return local.inFlight() + writesInFlight;
    }

    @Override
    public void close() {
        writes.close(); // first: no secondary may read this queue's buffers any more
        local.close();
        writesInFlight = 0;
        readyCount = 0;
    }
}
