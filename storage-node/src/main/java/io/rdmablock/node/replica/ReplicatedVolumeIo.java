package io.rdmablock.node.replica;

import io.rdmablock.node.nvmf.Request;
import io.rdmablock.node.nvmf.VolumeIo;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The {@link VolumeIo} of one host I/O queue of a volume's primary: READ goes to the local copy only; WRITE, FLUSH,
 * WRITE ZEROES and DATASET MANAGEMENT go to the local copy and, through {@link ReplicatedWrites}, to every in-sync
 * secondary, and are handed back once with the merged status. The forwarded capsule is the host's command (opcode,
 * nsid, CDW10..CDW15 unchanged) with the view's epoch in CDW2..CDW3 and a keyed SGL naming this request's own
 * registered buffer ({@link Request#dataAddress()}, {@link Request#dataRkey()}): the secondary fetches the payload
 * with RDMA READ, nothing is copied here.
 *
 * <p>Poller thread only; preallocated (a ring of completed slots, the request of each slot); no allocation or lock
 * per command.
 */
public final class ReplicatedVolumeIo implements VolumeIo {
    private final VolumeIo local;
    private final ReplicatedWrites writes;
    private final int lbaSize;
    private final Request[] bySlot;
    private final boolean[] replicated;
    private final int[] readySlot;
    private final int[] readyStatus;
    private int readyHead;
    private int readyCount;
    private int writesInFlight;
    private Completions outer;
    private final Completions fromLocal = this::localCompleted;
    private final Throttle throttle;

    /**
     * @param local     the node's own copy's handle of this queue
     * @param set       the volume's copies
     * @param entries   requests of the host queue
     * @param lbaSize   logical block size, bytes (DATASET MANAGEMENT ranges are in blocks)
     * @param timeoutNs replica timeout
     * @param pd        protection domain of the host queue's device
     * @param throttle  the node's resync throttle, told of every host command (foreground I/O)
     */
    public ReplicatedVolumeIo(VolumeIo local, ReplicaSet set, int entries, int lbaSize, long timeoutNs,
                              ProtectionDomain pd, Throttle throttle) {
        this.local = local;
        this.throttle = throttle;
        this.lbaSize = lbaSize;
        this.bySlot = new Request[entries];
        this.replicated = new boolean[entries];
        this.readySlot = new int[entries];
        this.readyStatus = new int[entries];
        this.writes = new ReplicatedWrites(set, entries, entries, timeoutNs, pd, this::writeCompleted,
                this::startHeld);
    }

    @Override
    public int start(Request r) {
        int op = r.opcode();
        throttle.foreground();
        if (op == Opcodes.IO_READ) {
            return local.start(r);
        }
        int slot = r.index();
        fill(writes.command(slot), r);
        int status = writes.begin(slot, System.nanoTime());
        if (status != 0) {
            return status;
        }
        bySlot[slot] = r;
        replicated[slot] = true;
        writesInFlight++;
        if (!writes.held(slot)) { // held by a region walk: started from writes.poll once the walker left
            startHeld(slot);
        }
        return IN_FLIGHT;
    }

    /** Starts the local copy's execution of the write of {@code slot}. */
    private void startHeld(int slot) {
        int ls = local.start(bySlot[slot]);
        if (ls != IN_FLIGHT) {
            writes.localDone(slot, ls);
        }
    }

    private void fill(ForwardCommand c, Request r) {
        c.opcode = r.opcode();
        c.nsid = r.nsid();
        c.cdw10 = r.cdw(10);
        c.cdw11 = r.cdw(11);
        c.cdw12 = r.cdw(12);
        c.cdw13 = r.cdw(13);
        c.cdw14 = r.cdw(14);
        c.cdw15 = r.cdw(15);
        c.dataAddress = r.dataAddress();
        c.dataLength = r.dataLengthBytes();
        c.rkey = r.dataRkey();
        switch (r.opcode()) {
            case Opcodes.IO_WRITE, Opcodes.IO_WRITE_ZEROES -> {
                c.offsetBytes = r.offsetBytes();
                c.lengthBytes = r.lengthBytes();
            }
            case Opcodes.IO_DATASET_MANAGEMENT -> dsmSpan(c, r);
            default -> {
                c.offsetBytes = 0;
                c.lengthBytes = 0;
            }
        }
    }

    /** The byte span covering every range of a DATASET MANAGEMENT (16-byte descriptors: attributes, NLB, SLBA). */
    private void dsmSpan(ForwardCommand c, Request r) {
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
        c.offsetBytes = lo == Long.MAX_VALUE ? 0 : lo;
        c.lengthBytes = lo == Long.MAX_VALUE ? 0 : hi - lo;
    }

    private void localCompleted(Request r, int status) {
        int slot = r.index();
        if (replicated[slot]) {
            writes.localDone(slot, status);
        } else {
            outer.completed(r, status);
        }
    }

    private void writeCompleted(int slot, int status) {
        int tail = (readyHead + readyCount) % readySlot.length;
        readySlot[tail] = slot;
        readyStatus[tail] = status;
        readyCount++;
    }

    @Override
    public int poll(Completions sink, int max) {
        outer = sink;
        int work = local.poll(fromLocal, max);
        work += writes.poll(System.nanoTime());
        while (readyCount > 0) {
            int slot = readySlot[readyHead];
            int status = readyStatus[readyHead];
            readyHead = (readyHead + 1) % readySlot.length;
            readyCount--;
            Request r = bySlot[slot];
            bySlot[slot] = null;
            replicated[slot] = false;
            writesInFlight--;
            sink.completed(r, status);
            work++;
        }
        return work;
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
