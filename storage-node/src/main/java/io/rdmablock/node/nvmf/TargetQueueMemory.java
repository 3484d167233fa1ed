package io.rdmablock.node.nvmf;

import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.RecvWr;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The registered memory of one {@link RdmaQueue}, allocated and registered once when the queue connects: three
 * regions in one shared arena, each registered with the device's protection domain ({@link Target#protectionDomain}).
 *
 * <ul>
 *   <li>RECV region: {@code entries} slots of {@code 4096 + roundUp(inCapsuleDataBytes, 4096)} bytes; the capsule
 *   of slot {@code i} starts at {@code 4096 - 64} so the in-capsule data after the 64-byte SQE is page aligned
 *   (O_DIRECT writes straight from the RECV buffer). One prebuilt {@link RecvWr} per slot (wrId
 *   {@code WR_RECV << 32 | i}, one SGE of 64 + in-capsule bytes). Local write + remote read: a peer node may RDMA
 *   READ a forwarded write's in-capsule data from here (docs/replication.md, "Wire").</li>
 *   <li>Data region: {@code entries x dataBytesPerRequest} (MDTS on I/O queues, 4096 on the admin queue), page
 *   aligned; request {@code i} owns slice {@code i}. Local write + remote write (iWARP needs it on the sink of an
 *   RDMA READ) + remote read (a peer node RDMA READs a forwarded write's payload from here). The rkey is never given
 *   to a host; only to peer nodes, through forwarded commands ({@link Request#dataRkey()}).</li>
 *   <li>Response region: {@code entries x 16} bytes, 64-byte aligned; request {@code i}'s response capsule.</li>
 * </ul>
 *
 * <p>The slices handed to the store are cached per RECV slot ({@link #recvData}). Threading: built on the acceptor
 * thread, then used by the queue's poller only. {@link #close} deregisters and frees everything; the store must no
 * longer use the buffers (the queue drains its store I/O first).
 */
final class TargetQueueMemory implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TargetQueueMemory.class);
    static final int PAGE = 4096;

    private final Arena arena = Arena.ofShared();
    private final MemoryRegion recvMr;
    private final MemoryRegion dataMr;
    private final MemoryRegion responseMr;
    /** Whole RECV region (capsules and in-capsule data). */
    final MemorySegment recvRegion;
    /** Whole data region (per-request data buffers). */
    final MemorySegment dataRegion;
    final MemorySegment[] recvSqe;
    final MemorySegment[] recvSgl;
    private final MemorySegment[] recvData;
    private final MemorySegment[] recvDataSlice;
    final RecvWr[] recvWrs;
    final Request[] requests;

    /**
     * Allocates and registers the regions of a queue of {@code entries} and builds its RECV work requests and
     * requests. On failure everything allocated so far is released and the exception rethrown.
     */
    TargetQueueMemory(ProtectionDomain pd, int entries, int inCapsuleDataBytes, int dataBytesPerRequest) {
        int capsuleBytes = SqeDescriptor.LENGTH + inCapsuleDataBytes;
        int slotBytes = PAGE + roundUp(inCapsuleDataBytes, PAGE);
        MemoryRegion recvTmp = null;
        MemoryRegion dataTmp = null;
        MemoryRegion rspTmp = null;
        try {
            recvRegion = arena.allocate((long) slotBytes * entries, PAGE);
            dataRegion = arena.allocate((long) dataBytesPerRequest * entries, PAGE);
            MemorySegment rspRegion = arena.allocate((long) CqeDescriptor.LENGTH * entries, 64);
            recvTmp = pd.registerMemory(recvRegion, Access.LOCAL_WRITE | Access.REMOTE_READ);
            dataTmp = pd.registerMemory(dataRegion, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            rspTmp = pd.registerMemory(rspRegion, Access.LOCAL_WRITE);
            recvSqe = new MemorySegment[entries];
            recvSgl = new MemorySegment[entries];
            recvData = new MemorySegment[entries];
            recvDataSlice = new MemorySegment[entries];
            recvWrs = new RecvWr[entries];
            requests = new Request[entries];
            for (int i = 0; i < entries; i++) {
                long slot = (long) slotBytes * i;
                MemorySegment capsule = recvRegion.asSlice(slot + PAGE - SqeDescriptor.LENGTH, capsuleBytes);
                recvSqe[i] = capsule.asSlice(0, SqeDescriptor.LENGTH);
                recvSgl[i] = capsule.asSlice(SqeDescriptor.SGL1_OFFSET, SglDescriptor.LENGTH);
                recvData[i] = capsule.asSlice(SqeDescriptor.LENGTH, inCapsuleDataBytes);
                RecvWr rwr = new RecvWr();
                rwr.wrId = RdmaQueue.wrId(RdmaQueue.WR_RECV, i);
                rwr.numSge = 1;
                rwr.sgList[0].set(capsule.address(), capsuleBytes, recvTmp.lkey());
                recvWrs[i] = rwr;
                requests[i] = new Request(i, dataRegion.asSlice((long) dataBytesPerRequest * i, dataBytesPerRequest),
                        dataTmp.lkey(), dataTmp.rkey(), recvTmp.rkey(),
                        rspRegion.asSlice((long) CqeDescriptor.LENGTH * i, CqeDescriptor.LENGTH), rspTmp.lkey());
            }
        } catch (RuntimeException e) {
            for (AutoCloseable c : new AutoCloseable[]{rspTmp, dataTmp, recvTmp}) {
                closeQuietly(c);
            }
            arena.close();
            throw e;
        }
        this.recvMr = recvTmp;
        this.dataMr = dataTmp;
        this.responseMr = rspTmp;
    }

    /** In-capsule data of RECV slot {@code recvIndex} at {@code offset}, {@code lengthBytes} long (slice cached). */
    MemorySegment recvData(int recvIndex, long offset, int lengthBytes) {
        MemorySegment s = recvDataSlice[recvIndex];
        if (s == null || offset != 0 || s.byteSize() != lengthBytes) {
            s = recvData[recvIndex].asSlice(offset, lengthBytes);
            if (offset == 0) {
                recvDataSlice[recvIndex] = s;
            }
        }
        return s;
    }

    /** Deregisters the three regions and frees the memory. Call once, after the QP and the store are done. */
    @Override
    public void close() {
        closeQuietly(responseMr);
        closeQuietly(dataMr);
        closeQuietly(recvMr);
        arena.close();
    }

    static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("close failed: {}", e.toString());
        }
    }

    private static int roundUp(int v, int align) {
        return (v + align - 1) / align * align;
    }
}
