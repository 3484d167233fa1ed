package io.rdmablock.node.io;

import io.rdmablock.node.target.Request;
import io.rdmablock.node.target.VolumeIo;
import io.rdmablock.node.store.BlockQueue;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.rdma.fabric.DsmRangeDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's own copy of a volume behind one I/O queue: a {@link BlockQueue} of the queue's depth. READ, WRITE (FUA:
 * {@code RWF_DSYNC}), FLUSH, WRITE ZEROES are one store command each; DATASET MANAGEMENT with the Deallocate
 * attribute (CDW11 AD; without it nothing is done, success) trims its non-empty ranges one after another (one store command per request in flight at a time, so the store queue never overflows). A store
 * result {@code -errno} becomes an NVMe status ({@link #statusFor}). Zero allocation per command: the request of a
 * store completion is found by its index ({@code userData}), reap arrays are preallocated.
 */
public final class LocalVolumeIo implements VolumeIo {
    private static final Logger LOG = LoggerFactory.getLogger(LocalVolumeIo.class);
    private static final int BATCH = 32;
    private static final int ENXIO = 6;
    private static final int ENOSPC = 28;

    private final BlockQueue queue;
    private final StoreVolume volume;
    private final int qid;
    /** The request of each store command in flight, by request index (= userData). */
    private final Request[] byIndex;
    private final long[] reapUserData = new long[BATCH];
    private final int[] reapResult = new int[BATCH];
    private boolean closed;

    private LocalVolumeIo(BlockQueue queue, StoreVolume volume, int qid, int entries) {
        this.queue = queue;
        this.volume = volume;
        this.qid = qid;
        this.byIndex = new Request[entries];
    }

    /**
     * Opens a store queue of {@code queue.entries()} on the volume store and registers the queue's data and RECV
     * regions with it (io_uring fixed buffers: every store READ/WRITE moves through one of them, so the kernel pins
     * them once, not per I/O). The default {@link VolumeIo.Factory} of a subsystem.
     */
    public static LocalVolumeIo open(VolumeIo.Context queue) {
        BlockQueue bq = queue.store().newQueue(queue.entries());
        try {
            // false (rdmablock.target.registerStoreBuffers): for A/B measurements and kernels that refuse them
            if (queue.registerStoreBuffers()) {
                bq.registerBuffers(queue.dataRegion(), queue.recvRegion());
            }
            return new LocalVolumeIo(bq, queue.volume(), queue.qid(), queue.entries());
        } catch (RuntimeException e) {
            bq.close();
            throw e;
        }
    }

    @Override
    public int start(Request r, long nowNs) {
        StoreVolume v = volume;
        int i = r.index;
        try {
            switch (r.opcode) {
                case Opcodes.IO_READ -> queue.submitRead(v, r.storeOffsetBytes, r.data, i);
                case Opcodes.IO_WRITE -> queue.submitWrite(v, r.storeOffsetBytes, r.data, r.fua, i);
                case Opcodes.IO_FLUSH -> queue.submitFlush(v, i);
                case Opcodes.IO_WRITE_ZEROES -> queue.submitWriteZeroes(v, r.storeOffsetBytes, r.storeLengthBytes, i);
                case Opcodes.IO_DATASET_MANAGEMENT -> {
                    if ((SqeDescriptor.cdw(r.sqe, 11) & SqeDescriptor.DSM_CDW11_AD) == 0) {
                        return 0; // no attribute we act on (CDW11 AD clear): nothing to do
                    }
                    r.rangeNext = 0;
                    int s = nextTrim(r);
                    if (s == IN_FLIGHT) {
                        byIndex[i] = r;
                    }
                    return s;
                }
                default -> throw new IllegalArgumentException("opcode 0x" + Integer.toHexString(r.opcode));
            }
        } catch (RuntimeException e) {
            LOG.warn("store submit failed: opcode=0x{}, cid={}, qid={}, offsetBytes={}, lengthBytes={}: {}",
                    Integer.toHexString(r.opcode), r.cid, qid, r.storeOffsetBytes, r.storeLengthBytes, e.toString());
            return NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR);
        }
        byIndex[i] = r;
        return IN_FLIGHT;
    }

    @Override
    public int poll(Completions sink, int max, long nowNs) {
        if (queue.inFlight() == 0) {
            return 0;
        }
        int m = queue.reap(reapUserData, reapResult, Math.min(max, BATCH));
        for (int k = 0; k < m; k++) {
            int index = (int) reapUserData[k];
            Request r = byIndex[index];
            int status = completed(r, reapResult[k]);
            if (status != IN_FLIGHT) {
                byIndex[index] = null;
                sink.completed(r, status);
            }
        }
        return m;
    }

    /** A store command of {@code r} completed with {@code result}: the status, or IN_FLIGHT (next DSM range). */
    private int completed(Request r, int result) {
        if (result < 0) {
            int status = statusFor(r.opcode, -result);
            LOG.warn("store command failed: opcode=0x{}, cid={}, qid={}, offsetBytes={}, errno={}, status={}",
                    Integer.toHexString(r.opcode), r.cid, qid, r.storeOffsetBytes, -result,
                    NvmeStatus.describe(status));
            return status;
        }
        if (r.opcode != Opcodes.IO_DATASET_MANAGEMENT) {
            return 0;
        }
        try {
            return nextTrim(r);
        } catch (RuntimeException e) {
            LOG.warn("trim submit failed: cid={}, qid={}: {}", r.cid, qid, e.toString());
            return NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR);
        }
    }

    /** Submits the next non-empty DSM range (IN_FLIGHT), or 0 when every range is done. */
    private int nextTrim(Request r) {
        int lba = volume.lbaSizeBytes();
        while (r.rangeNext < r.rangeCount) {
            int i = r.rangeNext++;
            long nlb = Integer.toUnsignedLong(DsmRangeDescriptor.blockCount(r.data, i));
            if (nlb == 0) {
                continue;
            }
            r.storeOffsetBytes = DsmRangeDescriptor.slba(r.data, i) * lba;
            r.storeLengthBytes = nlb * lba;
            queue.submitTrim(volume, r.storeOffsetBytes, r.storeLengthBytes, r.index);
            return IN_FLIGHT;
        }
        return 0;
    }

    @Override
    public int inFlight() {
        return queue.inFlight();
    }

    @Override
    public boolean awaitStore(long timeoutNs) {
        if (closed) {
            return false;
        }
        queue.awaitCompletion(timeoutNs);
        return true;
    }

    /** Closes the store queue (it waits, bounded, for what is still in flight: it may still use the buffers). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        java.util.Arrays.fill(byIndex, null);
        queue.close();
    }

    /**
     * NVMe status for a store errno (NVMe Base 2.0 section 4.2.3): ENXIO Invalid Namespace or Format, ENOSPC Capacity
     * Exceeded, else on READ Unrecovered Read Error (media, 81h), on WRITE / WRITE ZEROES / FLUSH Write Fault (media,
     * 80h), on anything else Internal Error.
     */
    static int statusFor(int opcode, int errno) {
        if (errno == ENXIO) {
            return NvmeStatus.generic(NvmeStatus.SC_INVALID_NAMESPACE);
        }
        if (errno == ENOSPC) {
            return NvmeStatus.generic(NvmeStatus.SC_CAPACITY_EXCEEDED);
        }
        return switch (opcode) {
            case Opcodes.IO_READ -> NvmeStatus.of(NvmeStatus.SCT_MEDIA, NvmeStatus.SC_UNRECOVERED_READ_ERROR, false);
            case Opcodes.IO_WRITE, Opcodes.IO_WRITE_ZEROES, Opcodes.IO_FLUSH ->
                    NvmeStatus.of(NvmeStatus.SCT_MEDIA, NvmeStatus.SC_WRITE_FAULT, false);
            default -> NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_INTERNAL_ERROR, false);
        };
    }
}
