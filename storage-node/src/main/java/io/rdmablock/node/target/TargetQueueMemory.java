package io.rdmablock.node.target;

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
 * The registered memory of one {@link RdmaQueue}, in two steps, each registered with the device's protection domain
 * ({@link Target#protectionDomain}):
 *
 * <ol>
 *   <li>When the queue is accepted (pending, no Fabrics Connect yet): only the <em>Connect slot</em>, index
 *   {@link #connectIndex} = {@code entries}: one page holding a RECV capsule buffer of {@code 64 + min(1024,
 *   inCapsuleDataBytes)} bytes (a Connect SQE with its 1024-byte data in the capsule), a 1024-byte data buffer (the
 *   Connect data fetched by RDMA READ when the host sends a keyed SGL) and a 16-byte response capsule, and one
 *   request: {@value #CONNECT_SLOT_BYTES} bytes per pending queue. Before its Connect a host may send nothing else
 *   (any other command is a Command Sequence Error and has no data to move), so nothing more is needed.</li>
 *   <li>{@link #grow} once a Connect has been validated: the three regions below, in one shared arena.</li>
 * </ol>
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
 * <p>The arrays below have {@code entries + 1} elements (the last is the Connect slot); elements {@code 0 ..
 * entries - 1} are null until {@link #grow}. The bytes registered are added to the target's count
 * ({@link Target#registeredQueueBytes()}) and taken off again by {@link #close}. The slices handed to the store are
 * cached per RECV slot ({@link #recvData}). Threading: built on the acceptor thread, grown and used by the queue's
 * poller only, closed by whoever tears the queue down last. {@link #close} deregisters and frees everything; the
 * store must no longer use the buffers (the queue drains its store I/O first).
 */
final class TargetQueueMemory implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TargetQueueMemory.class);
    static final int PAGE = 4096;
    /** Registered bytes of a pending queue (its Connect slot): one page. */
    static final int CONNECT_SLOT_BYTES = PAGE;
    private static final int CONNECT_DATA_BYTES = 1024;

    private final ProtectionDomain pd;
    private final int entries;
    private final int inCapsuleDataBytes;
    private final int dataBytesPerRequest;
    private final java.util.concurrent.atomic.AtomicLong registeredBytes;
    /** Index of the Connect slot and request: {@code entries}. */
    final int connectIndex;
    private final Arena connectArena = Arena.ofShared();
    private final MemoryRegion connectMr;
    private Arena arena;
    private MemoryRegion recvMr;
    private MemoryRegion dataMr;
    private MemoryRegion responseMr;
    private long bytes;
    private boolean closed;
    /** Whole RECV region (capsules and in-capsule data); null until {@link #grow}. */
    MemorySegment recvRegion;
    /** Whole data region (per-request data buffers); null until {@link #grow}. */
    MemorySegment dataRegion;
    final MemorySegment[] recvSqe;
    final MemorySegment[] recvSgl;
    private final MemorySegment[] recvData;
    private final MemorySegment[] recvDataSlice;
    final RecvWr[] recvWrs;
    final Request[] requests;

    /**
     * Allocates and registers the Connect slot of a queue of {@code entries} ({@value #CONNECT_SLOT_BYTES} bytes),
     * added to {@code registeredBytes}. On failure everything allocated so far is released and the exception
     * rethrown.
     *
     * @throws io.rdmablock.rdma.verbs.VerbsException when the registration fails
     */
    TargetQueueMemory(ProtectionDomain pd, int entries, int inCapsuleDataBytes, int dataBytesPerRequest,
                      java.util.concurrent.atomic.AtomicLong registeredBytes) {
        this.pd = pd;
        this.entries = entries;
        this.inCapsuleDataBytes = inCapsuleDataBytes;
        this.dataBytesPerRequest = dataBytesPerRequest;
        this.registeredBytes = registeredBytes;
        this.connectIndex = entries;
        recvSqe = new MemorySegment[entries + 1];
        recvSgl = new MemorySegment[entries + 1];
        recvData = new MemorySegment[entries + 1];
        recvDataSlice = new MemorySegment[entries + 1];
        recvWrs = new RecvWr[entries + 1];
        requests = new Request[entries + 1];
        int icd = Math.min(CONNECT_DATA_BYTES, inCapsuleDataBytes);
        int capsuleBytes = SqeDescriptor.LENGTH + icd;
        try {
            MemorySegment page = connectArena.allocate(CONNECT_SLOT_BYTES, PAGE);
            connectMr = pd.registerMemory(page, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        } catch (RuntimeException e) {
            connectArena.close();
            throw e;
        }
        MemorySegment page = connectMr.segment();
        // [0, 1024): Connect data (RDMA READ sink); [1024, 1024 + 64 + icd): the capsule; then the response
        MemorySegment capsule = page.asSlice(CONNECT_DATA_BYTES, capsuleBytes);
        long rspOffset = (CONNECT_DATA_BYTES + capsuleBytes + 63) / 64 * 64;
        bindSlot(connectIndex, capsule, icd, connectMr.lkey());
        requests[connectIndex] = new Request(connectIndex, page.asSlice(0, CONNECT_DATA_BYTES), connectMr.lkey(),
                connectMr.rkey(), connectMr.rkey(), connectMr.lkey(), page.asSlice(rspOffset, CqeDescriptor.LENGTH), connectMr.lkey());
        bytes = CONNECT_SLOT_BYTES;
        registeredBytes.addAndGet(bytes);
    }

    /** Bytes {@link #grow} registers (RECV slots, data buffers, response capsules), before alignment. */
    long growBytes() {
        long slotBytes = PAGE + roundUp(inCapsuleDataBytes, PAGE);
        return (slotBytes + dataBytesPerRequest + CqeDescriptor.LENGTH) * (long) entries;
    }

    /** True once {@link #grow} succeeded. */
    boolean grown() {
        return arena != null;
    }

    /**
     * Allocates and registers the queue's full regions (above) and builds its RECV work requests and requests
     * {@code 0 .. entries - 1}; adds their bytes to the target's count. Poller thread, after a validated Connect.
     * Idempotent. On failure everything it allocated is released, the queue stays pending, and the exception is
     * rethrown.
     *
     * @throws io.rdmablock.rdma.verbs.VerbsException when a registration fails
     */
    void grow() {
        if (arena != null) {
            return;
        }
        int capsuleBytes = SqeDescriptor.LENGTH + inCapsuleDataBytes;
        int slotBytes = PAGE + roundUp(inCapsuleDataBytes, PAGE);
        Arena a = Arena.ofShared();
        MemoryRegion recvTmp = null;
        MemoryRegion dataTmp = null;
        MemoryRegion rspTmp = null;
        try {
            MemorySegment recvSeg = a.allocate((long) slotBytes * entries, PAGE);
            MemorySegment dataSeg = a.allocate((long) dataBytesPerRequest * entries, PAGE);
            MemorySegment rspRegion = a.allocate((long) CqeDescriptor.LENGTH * entries, 64);
            recvTmp = pd.registerMemory(recvSeg, Access.LOCAL_WRITE | Access.REMOTE_READ);
            dataTmp = pd.registerMemory(dataSeg, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            rspTmp = pd.registerMemory(rspRegion, Access.LOCAL_WRITE);
            for (int i = 0; i < entries; i++) {
                long slot = (long) slotBytes * i;
                bindSlot(i, recvSeg.asSlice(slot + PAGE - SqeDescriptor.LENGTH, capsuleBytes), inCapsuleDataBytes,
                        recvTmp.lkey());
                requests[i] = new Request(i, dataSeg.asSlice((long) dataBytesPerRequest * i, dataBytesPerRequest),
                        dataTmp.lkey(), dataTmp.rkey(), recvTmp.rkey(), recvTmp.lkey(),
                        rspRegion.asSlice((long) CqeDescriptor.LENGTH * i, CqeDescriptor.LENGTH), rspTmp.lkey());
            }
            long grownBytes = recvSeg.byteSize() + dataSeg.byteSize() + rspRegion.byteSize();
            recvRegion = recvSeg;
            dataRegion = dataSeg;
            recvMr = recvTmp;
            dataMr = dataTmp;
            responseMr = rspTmp;
            arena = a;
            bytes += grownBytes;
            registeredBytes.addAndGet(grownBytes);
        } catch (RuntimeException e) {
            for (AutoCloseable c : new AutoCloseable[]{rspTmp, dataTmp, recvTmp}) {
                closeQuietly(c);
            }
            a.close();
            for (int i = 0; i < entries; i++) {
                recvSqe[i] = null;
                recvSgl[i] = null;
                recvData[i] = null;
                recvWrs[i] = null;
                requests[i] = null;
            }
            throw e;
        }
    }

    private void bindSlot(int i, MemorySegment capsule, int icd, int lkey) {
        recvSqe[i] = capsule.asSlice(0, SqeDescriptor.LENGTH);
        recvSgl[i] = capsule.asSlice(SqeDescriptor.SGL1_OFFSET, SglDescriptor.LENGTH);
        recvData[i] = capsule.asSlice(SqeDescriptor.LENGTH, icd);
        RecvWr rwr = new RecvWr();
        rwr.wrId = QueueBuffers.wrId(QueueBuffers.WR_RECV, i);
        rwr.numSge = 1;
        rwr.sgList[0].set(capsule.address(), (int) capsule.byteSize(), lkey);
        recvWrs[i] = rwr;
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

    /**
     * Deregisters every region and frees the memory; takes this queue's bytes off the target's count. Call once the
     * QP and the store are done with them (any thread); idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeQuietly(responseMr);
        closeQuietly(dataMr);
        closeQuietly(recvMr);
        closeQuietly(connectMr);
        if (arena != null) {
            arena.close();
        }
        connectArena.close();
        registeredBytes.addAndGet(-bytes);
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
