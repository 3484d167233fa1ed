package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.SendWr;

import java.lang.foreign.MemorySegment;

/**
 * One preallocated command slot of an {@link FabricQueue}: its state, the capsule it serves, its registered data
 * buffer and response capsule, and the two send work requests it posts (data transfer, response SEND). Created when
 * the queue connects; reused for every command; never shared between queues or threads.
 *
 * <p>Public for {@link io.rdmablock.node.target.VolumeIo} implementations outside this package: they read the command they execute or forward
 * through the accessors below (valid between {@link io.rdmablock.node.target.VolumeIo#start} and the command's completion; every other member
 * is the queue's). The accessors allocate nothing.
 */
public final class Request {

    /**
     * Request states (after SPDK {@code enum spdk_nvmf_rdma_request_state}). Only {@link FabricQueue#advance} writes
     * {@link #state}: it moves a request forward until no transition applies. Outside events (work completions, store
     * completions, fence drained, asynchronous event) are recorded in {@link #pending} and only move a request out of
     * the waiting state that expects them.
     */
    enum State {
        /** In the queue's free list, bound to no capsule. */
        FREE,
        /** Bound to a received capsule; not yet parsed. */
        NEW,
        /** Parsed; host data is being fetched with an RDMA READ (waits for its work completion). */
        TRANSFERRING_HOST_TO_CONTROLLER,
        /** Parsed and valid, host data (if any) in place; the command can be executed. */
        READY_TO_EXECUTE,
        /** The queue's {@link io.rdmablock.node.target.VolumeIo} executes the command (waits for its completion, status then set). */
        EXECUTING,
        /** Held by the controller without a response (Asynchronous Event Request); completed by an event or teardown. */
        HELD,
        /**
         * Admin Connect of a host whose previous association with the subsystem is being torn down: waits until
         * that association's store I/O has drained, so nothing of it can land after the new one is acknowledged.
         */
        AWAITING_FENCE,
        /**
         * Authentication Receive whose answer needs a DH computation ({@link DhchapWork}): waits, without blocking the
         * poller, until a worker did it (and the peer address had DH budget for it); then executes again.
         */
        AWAITING_AUTH,
        /** Status known; the response (and controller-to-host data) is to be posted. */
        READY_TO_COMPLETE,
        /** Response SEND posted (after the RDMA WRITE of read data, if any); waits for the SEND completion. */
        COMPLETING
    }

    /**
     * Outside events, recorded by {@link #event} and applied by {@link FabricQueue#advance} (each is expected in exactly
     * one waiting state).
     */
    enum Event {
        /** Nothing pending. */
        NONE,
        /** FREE: a capsule was received and bound to this request ({@link #reset}). */
        CAPSULE,
        /** TRANSFERRING_HOST_TO_CONTROLLER: the RDMA READ of the host's data completed. */
        DATA_RECEIVED,
        /** EXECUTING: the queue's {@link io.rdmablock.node.target.VolumeIo} handed the command back; {@link #status} is set. */
        VOLUME_IO_DONE,
        /** AWAITING_FENCE: the host's previous association drained, or the fence deadline passed. */
        FENCE_DONE,
        /** AWAITING_AUTH: the queue's DH computation is done ({@link QueueAuthentication#resume}). */
        AUTH_DONE,
        /** HELD: the controller has an asynchronous event for this request ({@link #dw0} set). */
        ASYNC_EVENT,
        /** COMPLETING: the response SEND completed. */
        SENT
    }

    /** Data direction of a command. */
    static final int XFER_NONE = 0;
    static final int XFER_HOST_TO_CONTROLLER = 1;
    static final int XFER_CONTROLLER_TO_HOST = 2;

    public final int index;
    /** Registered buffer, page aligned, {@code dataCapacity} bytes. */
    final MemorySegment dataBuffer;
    final int bufferLkey;
    /** Remote key of the data region ({@link #dataBuffer}) and of the RECV region (in-capsule data). */
    private final int dataRegionRkey;
    private final int recvRegionRkey;
    private final int recvRegionLkey;
    /** Registered 16-byte response capsule. */
    final MemorySegment response;
    /** RDMA READ (host write data) or RDMA WRITE (host read data). */
    final SendWr dataWr = new SendWr();
    /** Response capsule SEND. */
    final SendWr responseWr = new SendWr();

    /** Written by {@link FabricQueue#advance} only. */
    State state = State.FREE;
    /** The outside event not yet applied by {@link FabricQueue#advance}, or {@link Event#NONE}. */
    Event pending = Event.NONE;
    /** RECV slot holding the capsule, -1 when none. */
    int recvIndex = -1;
    /** The 64-byte SQE in the RECV slot. */
    public MemorySegment sqe;
    /** Bytes received in the capsule (SQE + in-capsule data). */
    int capsuleBytes;
    public int cid;
    /** True when this request holds its cid in the queue's in-use set (false for a rejected duplicate). */
    boolean ownsCid;
    public int opcode;
    /** Metrics index of the command ({@link io.rdmablock.node.metrics.NodeMetrics}). */
    int metricsOp;
    long startNs;

    int xfer;
    /** Bytes moved between host and controller. */
    int transferBytes;
    boolean inCapsuleData;
    long remoteAddress;
    int rkey;
    /**
     * The keyed SGL had the invalidate subtype (4Fh): the host asked for remote invalidation of {@link #rkey}. The
     * response is a plain SEND today (the Linux host then invalidates the key itself); a provider with SEND with
     * Invalidate can answer with it.
     */
    boolean remoteInvalidate;
    /** Where the command's data lives: a slice of {@link #dataBuffer} or of the RECV slot (in-capsule data). */
    public MemorySegment data;

    public long storeOffsetBytes;
    public long storeLengthBytes;
    public boolean fua;
    /** DATASET MANAGEMENT: next range to trim and number of ranges. */
    public int rangeNext;
    public int rangeCount;

    int status;
    int dw0;
    int dw1;

    /** AWAITING_FENCE: the controllers being drained and the deadline. Connect path only. */
    java.util.List<TargetController> fence;
    long fenceDeadlineNs;

    /** Last slice of {@link #dataBuffer} handed out, reused while the length repeats (no allocation per I/O). */
    private MemorySegment dataSlice;

    public Request(int index, MemorySegment dataBuffer, int bufferLkey, int dataRegionRkey, int recvRegionRkey,
            int recvRegionLkey, MemorySegment response, int responseLkey) {
        this.index = index;
        this.dataBuffer = dataBuffer;
        this.bufferLkey = bufferLkey;
        this.dataRegionRkey = dataRegionRkey;
        this.recvRegionRkey = recvRegionRkey;
        this.recvRegionLkey = recvRegionLkey;
        this.response = response;
        responseWr.wrId = QueueBuffers.wrId(QueueBuffers.WR_SEND, index);
        responseWr.numSge = 1;
        responseWr.sgList[0].set(response.address(), (int) response.byteSize(), responseLkey);
        responseWr.sendFlags = SendWr.SIGNALED;
        dataWr.numSge = 1;
    }

    /** Clears per-command fields when the request is bound to a new capsule. */
    void reset(int recvIndex, MemorySegment sqe, int capsuleBytes, long nowNs) {
        this.recvIndex = recvIndex;
        this.sqe = sqe;
        this.capsuleBytes = capsuleBytes;
        this.startNs = nowNs;
        cid = 0;
        ownsCid = false;
        opcode = 0;
        metricsOp = 0;
        xfer = XFER_NONE;
        transferBytes = 0;
        inCapsuleData = false;
        remoteAddress = 0;
        rkey = 0;
        remoteInvalidate = false;
        data = null;
        storeOffsetBytes = 0;
        storeLengthBytes = 0;
        fua = false;
        rangeNext = 0;
        rangeCount = 0;
        status = 0;
        dw0 = 0;
        dw1 = 0;
        fence = null;
    }

    /**
     * Native address of the command's data where it lives on this node: a slice of the request's registered data
     * buffer (keyed SGL: WRITE payload after its RDMA READ, READ data before its RDMA WRITE, DSM range list) or the
     * in-capsule data in the RECV slot. Valid from READY_TO_EXECUTE until the response is posted; 0 when the
     * command has no data (FLUSH, WRITE ZEROES). With {@link #dataRkey()} and {@link #dataLengthBytes()}, a keyed
     * SGL (NVMe-oF 1.1 section 2.3.2) a peer node can RDMA READ the payload from (docs/replication.md, "Wire").
     */
    public long dataAddress() {
        return data == null ? 0 : data.address();
    }

    /**
     * Remote key covering {@link #dataAddress()}: the data region's (registered LOCAL_WRITE | REMOTE_WRITE |
     * REMOTE_READ) or, for in-capsule data, the RECV region's (LOCAL_WRITE | REMOTE_READ); both in the device's
     * protection domain ({@link Target#protectionDomain}). 0 when the command has no data.
     */
    public int dataRkey() {
        if (data == null) {
            return 0;
        }
        return inCapsuleData ? recvRegionRkey : dataRegionRkey;
    }

    /**
     * Local key covering {@link #dataAddress()} on this node's device (the data region's or, for in-capsule data, the
     * RECV region's), for a work request of this node that sends the data from where it lies (a primary's forward
     * with the data in its capsule: a second SGE, no copy). 0 when the command has no data.
     */
    public int dataLkey() {
        if (data == null) {
            return 0;
        }
        return inCapsuleData ? recvRegionLkey : bufferLkey;
    }

    /** Bytes of the command's data at {@link #dataAddress()}; 0 when none. */
    public int dataLengthBytes() {
        return data == null ? 0 : (int) data.byteSize();
    }

    /** The request's slot in its queue, 0 .. entries - 1 (stable for the queue's life; a handle can index by it). */
    public int index() {
        return index;
    }

    /** Opcode (SQE byte 0), e.g. {@link io.rdmablock.rdma.fabric.Opcodes#IO_WRITE}. */
    public int opcode() {
        return opcode;
    }

    /** Command identifier (SQE bytes 2..3). */
    public int cid() {
        return cid;
    }

    /** Namespace id (SQE bytes 4..7): 1, or FFFFFFFFh for a FLUSH of every namespace. */
    public int nsid() {
        return SqeDescriptor.nsid(sqe);
    }

    /** READ / WRITE / WRITE ZEROES: starting LBA (CDW10-11). */
    public long slba() {
        return SqeDescriptor.slba(sqe);
    }

    /** READ / WRITE / WRITE ZEROES: number of logical blocks, 1-based (NLB of CDW12 + 1). */
    public int blockCount() {
        return SqeDescriptor.blockCount(sqe);
    }

    /** READ / WRITE / WRITE ZEROES: byte offset in the volume (slba x LBA size). */
    public long offsetBytes() {
        return storeOffsetBytes;
    }

    /** READ / WRITE / WRITE ZEROES: byte length (blockCount x LBA size). */
    public long lengthBytes() {
        return storeLengthBytes;
    }

    /** WRITE / READ: Force Unit Access (CDW12 bit 30). */
    public boolean fua() {
        return fua;
    }

    /** Command dword {@code n}, 10 .. 15 ({@link SqeDescriptor#cdw}). */
    public int cdw(int n) {
        return SqeDescriptor.cdw(sqe, n);
    }

    /**
     * The epoch a primary forwards with a write-type command: CDW2 (bits 31:0) and CDW3 (bits 63:32), SQE bytes 8..15
     * ({@link SqeDescriptor#cdw23}; docs/replication.md, "Wire"). 0 from a host, which leaves them reserved.
     */
    public long epoch() {
        return SqeDescriptor.cdw23(sqe);
    }

    /**
     * The 64-byte SQE as received, in the RECV slot (NVMe Base 2.0 Figure 88); to copy into a forwarded capsule. Must
     * not be written.
     */
    public MemorySegment sqe() {
        return sqe;
    }

    /**
     * DATASET MANAGEMENT: number of ranges (NR of CDW10 + 1); the range list ({@link
     * io.rdmablock.rdma.fabric.DsmRangeDescriptor}, 16 bytes each) is the command's data ({@link #data()},
     * {@link #dataAddress()}). 0 for other commands.
     */
    public int dsmRangeCount() {
        return rangeCount;
    }

    /** The command's data as a segment of {@link #dataLengthBytes()} bytes at {@link #dataAddress()}; null if none. */
    public MemorySegment data() {
        return data;
    }

    /** The first {@code lengthBytes} of the data buffer, as a segment of exactly that size. */
    MemorySegment dataSlice(int lengthBytes) {
        MemorySegment s = dataSlice;
        if (s == null || s.byteSize() != lengthBytes) {
            s = dataBuffer.asSlice(0, lengthBytes);
            dataSlice = s;
        }
        return s;
    }

    /**
     * Sets the response status; no data goes back to the host.
     *
     * @return {@link Outcome#COMPLETE}, for handlers to return
     */
    Outcome fail(int nvmeStatus) {
        status = nvmeStatus;
        xfer = XFER_NONE;
        return Outcome.COMPLETE;
    }

    /** Records an outside event for {@link FabricQueue#advance} to apply (the caller then calls advance). */
    void event(Event e) {
        pending = e;
    }

    /** True (and the event consumed) when {@code e} is pending. */
    boolean take(Event e) {
        if (pending != e) {
            return false;
        }
        pending = Event.NONE;
        return true;
    }
}
