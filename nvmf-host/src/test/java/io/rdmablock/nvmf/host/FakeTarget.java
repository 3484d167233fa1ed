package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.CmPrivateData;
import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.DsmRangeDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.RecvWr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.WorkCompletion;
import io.rdmablock.rdma.verbs.WrOpcode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A minimal in-memory NVMe-oF/RDMA target for initiator unit tests, with fault hooks the real node does not have:
 * drop responses (a stalled command), send every response twice (duplicate completions, C9), cut and restore the
 * link (C6). One thread per queue, commands handled one at a time. Not the storage node: the end-to-end tests run
 * against that.
 */
public final class FakeTarget implements AutoCloseable {
    public static final int IN_CAPSULE = 8192;
    public final VerbsProvider provider;
    public final String subnqn;
    public final int lbaSize;
    public final int mdtsBytes;
    public final boolean zeroesAfterTrim;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment store;
    private volatile long capacityBytes;
    private final CopyOnWriteArrayList<FakeQueue> queues = new CopyOnWriteArrayList<>();
    private final AtomicInteger cntlids = new AtomicInteger(1);
    private volatile CmListener listener;
    private volatile Thread acceptor;
    private ProtectionDomain pd;
    private int port;
    /** Responses still to drop (the command is consumed, never answered). */
    public final AtomicInteger dropResponses = new AtomicInteger();
    public volatile boolean duplicateResponses;
    /** When set, I/O queue responses (and READ data) wait until it opens (at most 10 s). */
    public volatile java.util.concurrent.CountDownLatch holdResponses;
    /** When set, each connection request waits until it opens (at most 10 s) before it is accepted. */
    public volatile java.util.concurrent.CountDownLatch holdAccepts;
    /** Connection requests received while {@link #holdAccepts} was set. */
    public final AtomicInteger heldAccepts = new AtomicInteger();
    /** I/O commands on this qid (0: none) are answered at once with Internal Error, never held. */
    public volatile int failQid;
    /** An I/O command at this slba (-1: none) tears down its connection instead of being answered. */
    public volatile long poisonSlba = -1;
    /** Serial number in Identify Controller (the storage node puts the volume id there). */
    public volatile String serial = "fake";
    /** I/O queue commands received. */
    public final AtomicInteger commands = new AtomicInteger();
    /** Strict mode: refuse what Linux nvmet-rdma refuses and describe itself as nvmet does ({@link NvmetRules}). */
    public volatile boolean nvmet;
    /** CAP as Property Get answers it (both modes). */
    public volatile long cap = NvmetRules.CAP;
    /** Active namespaces: I/O to others is Invalid Namespace, their Identify Namespace all zero (strict mode). */
    public volatile int[] activeNsids = {1};
    /** Set Features Number of Queues grants this many I/O queues. */
    public volatile int grantedQueues = 64;
    /** Commands refused by the strict checks, and the last one described. */
    public final AtomicInteger refusals = new AtomicInteger();
    public volatile String lastRefusal;
    /** CC.EN answers CSTS.CFS (controller fatal status) whatever CC says. */
    public volatile boolean fatalOnEnable;
    /** HOSTNQN of the last Connect. */
    public volatile String lastHostnqn;
    /** CC as the host last wrote it, and CSTS (one controller at a time; reset by an admin Connect). */
    public volatile int cc;
    public volatile int csts;
    /**
     * ANA state of the namespace's group 1 ({@link AnaLog#OPTIMIZED} ..); 0 (default): no ANA reporting, Get Log Page
     * 0Ch is answered Invalid Field. I/O while Inaccessible, Persistent Loss or Change is answered SCT 3h (path
     * related) SC 02h, 01h or 03h, without touching the store.
     */
    public volatile int anaState;
    /** I/O commands still to answer {@link #injectedStatus} (e.g. SCT 3h/SC 03h), store untouched, any ANA state. */
    public final AtomicInteger injectedResponses = new AtomicInteger();
    public volatile int injectedStatus;
        /** ANA change count (the log's and the group's). */
    public final AtomicInteger anaChanges = new AtomicInteger();
    /** ANA Change notices to deliver: an outstanding AER completes when it differs from what its queue sent. */
    private final AtomicInteger aenGeneration = new AtomicInteger();

    public FakeTarget(VerbsProvider provider, String subnqn, long capacityBytes, long maxCapacityBytes, int lbaSize,
               int mdtsBytes, boolean zeroesAfterTrim) {
        this.provider = provider;
        this.subnqn = subnqn;
        this.capacityBytes = capacityBytes;
        this.lbaSize = lbaSize;
        this.mdtsBytes = mdtsBytes;
        this.zeroesAfterTrim = zeroesAfterTrim;
        this.store = arena.allocate(maxCapacityBytes, 4096);
    }

    /**
     * A target whose namespace is {@code sharedStore} (not freed by this target): several targets over one store are
     * the copies of a replicated volume whose replication is instant (multipath tests).
     */
    public FakeTarget(VerbsProvider provider, String subnqn, long capacityBytes, MemorySegment sharedStore,
                      int lbaSize, int mdtsBytes, boolean zeroesAfterTrim) {
        this.provider = provider;
        this.subnqn = subnqn;
        this.capacityBytes = capacityBytes;
        this.lbaSize = lbaSize;
        this.mdtsBytes = mdtsBytes;
        this.zeroesAfterTrim = zeroesAfterTrim;
        this.store = sharedStore;
    }

    /**
     * Sets the ANA state; with {@code notify} an ANA Change notice completes each controller's outstanding
     * Asynchronous Event Request (type 2h, info 03h, log 0Ch), as a real target does on every change.
     */
    public void setAnaState(int state, boolean notify) {
        anaState = state;
        anaChanges.incrementAndGet();
        if (notify) {
            aenGeneration.incrementAndGet();
            for (FakeQueue q : queues) {
                if (q.qid == 0) {
                    try {
                        q.cq.wakeup();
                    } catch (RuntimeException ignored) {
                        // closing
                    }
                }
            }
        }
    }

    /** Switches to strict, nvmet-like behaviour (random hex serial, MN "Linux", 4096-byte inline, NN 1024). */
    public FakeTarget nvmetLike() {
        nvmet = true;
        serial = NvmetRules.randomSerial();
        return this;
    }

    private boolean active(int nsid) {
        for (int n : activeNsids) {
            if (n == nsid) {
                return true;
            }
        }
        return false;
    }

    public InetSocketAddress start() {
        listener = provider.listen(new InetSocketAddress("127.0.0.1", port), 16);
        port = listener.localAddress().getPort();
        CmListener l = listener;
        Thread t = Thread.ofPlatform().daemon().name("fake-target-accept").start(() -> acceptLoop(l));
        acceptor = t;
        return listener.localAddress();
    }

    private long capValue() {
        return cap;
    }

    public void resize(long newCapacityBytes) {
        capacityBytes = newCapacityBytes;
    }

    public MemorySegment store() {
        return store;
    }

    /** Closes the listener and every queue: the host sees its connections fail and cannot reconnect. */
    public void cutLink() {
        CmListener l = listener;
        listener = null;
        if (l != null) {
            l.close();
        }
        try {
            if (acceptor != null) {
                acceptor.join(2000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (FakeQueue q : queues) {
            q.stop();
        }
        queues.clear();
    }

    /** Listens again on the same port. */
    public void restore() {
        start();
    }

    @Override
    public void close() {
        cutLink();
        if (pd != null) {
            pd.close();
        }
        arena.close();
    }

    private void acceptLoop(CmListener l) {
        while (listener == l) {
            CmId id = l.getRequest(100_000_000L);
            if (id == null) {
                continue;
            }
            java.util.concurrent.CountDownLatch hold = holdAccepts;
            if (hold != null) {
                heldAccepts.incrementAndGet();
                try {
                    hold.await(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            try {
                CmPrivateData.Request req = CmPrivateData.Request.decode(id.privateData());
                synchronized (this) {
                    if (pd == null) {
                        pd = id.device().allocPd();
                    }
                }
                FakeQueue q = new FakeQueue(id, req.qid(), req.hrqsize());
                queues.add(q);
                id.accept(new CmPrivateData.Accept(0, req.hrqsize()).encode(), 5_000_000_000L);
                q.thread.start();
            } catch (RuntimeException e) {
                id.close();
            }
        }
    }

    private final class FakeQueue implements Runnable {
        final CmId id;
        final int qid;
        final int entries;
        final CompletionQueue cq;
        final QueuePair qp;
        final int capsuleBytes = SqeDescriptor.LENGTH + IN_CAPSULE;
        final MemorySegment recvBuf;
        final MemoryRegion recvMr;
        final MemorySegment staging;
        final MemoryRegion stagingMr;
        final MemorySegment rsp;
        final MemoryRegion rspMr;
        final Thread thread;
        final WorkCompletion[] wcs = WorkCompletion.array(32);
        final ArrayDeque<long[]> stash = new ArrayDeque<>();
        volatile boolean stopped;
        long seq;
        /** cid of the Asynchronous Event Request held on this (admin) queue, -1: none. */
        int aerCid = -1;
        int aenSent = aenGeneration.get();

        FakeQueue(CmId id, int qid, int entries) {
            this.id = id;
            this.qid = qid;
            this.entries = entries;
            cq = id.device().createCq(entries * 4 + 16);
            QpInitAttr a = new QpInitAttr().pd(pd).cq(cq);
            a.maxSendWr = entries * 3 + 8;
            a.maxRecvWr = entries;
            qp = id.createQp(a);
            recvBuf = arena.allocate((long) capsuleBytes * entries, 4096);
            recvMr = pd.registerMemory(recvBuf, Access.LOCAL_WRITE);
            staging = arena.allocate(Math.max(mdtsBytes, 1 << 20) + 8192L, 4096);
            stagingMr = pd.registerMemory(staging, Access.LOCAL_WRITE);
            rsp = arena.allocate(16L * entries * 2, 4096);
            rspMr = pd.registerMemory(rsp, Access.LOCAL_WRITE);
            for (int i = 0; i < entries; i++) {
                postRecv(i);
            }
            thread = Thread.ofPlatform().daemon().name("fake-target-q" + qid).unstarted(this);
        }

        void stop() {
            stopped = true;
            id.close();
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            cq.close();
        }

        private void postRecv(int i) {
            RecvWr r = new RecvWr();
            r.wrId = i;
            r.sgList[0].set(recvMr, (long) i * capsuleBytes, capsuleBytes);
            r.numSge = 1;
            qp.postRecv(r);
        }

        @Override
        public void run() {
            try {
                while (!stopped) {
                    if (qid == 0 && aerCid >= 0 && aenSent != aenGeneration.get()) {
                        sendAen();
                    }
                    long[] c = stash.pollFirst();
                    if (c != null) {
                        handle((int) c[0], (int) c[1]);
                        continue;
                    }
                    int n = cq.await(wcs, wcs.length, 100_000_000L);
                    for (int i = 0; i < n; i++) {
                        if (!wcs[i].ok()) {
                            return;
                        }
                        if (wcs[i].opcode == io.rdmablock.rdma.verbs.WcOpcode.RECV) {
                            stash.addLast(new long[]{wcs[i].wrId, wcs[i].byteLen});
                        }
                    }
                }
            } catch (RuntimeException e) {
                if (!stopped) {
                    System.err.println("fake target qid " + qid + ": " + e);
                }
            }
        }

        private void sendAen() {
            aenSent = aenGeneration.get();
            MemorySegment r = rsp.asSlice(16L * entries, 16);
            CqeDescriptor.set(r, AdminCommands.aenDw0(AdminCommands.AEN_TYPE_NOTICE, AdminCommands.AEN_INFO_ANA_CHANGE,
                    AdminCommands.LID_ANA), 0, 0, aerCid, 0);
            aerCid = -1;
            SendWr send = new SendWr();
            send.wrId = 5L << 50;
            send.opcode = WrOpcode.SEND;
            send.sendFlags = SendWr.SIGNALED;
            send.sgList[0].set(rspMr, 16L * entries, 16);
            send.numSge = 1;
            qp.postSend(send);
        }

        /** Waits for the completion of the one-sided op with wrId, stashing RECVs that arrive meanwhile. */
        private boolean awaitOp(long wrId) {
            while (!stopped) {
                int n = cq.await(wcs, wcs.length, 100_000_000L);
                boolean done = false;
                for (int i = 0; i < n; i++) {
                    if (!wcs[i].ok()) {
                        stopped = true;
                        return false;
                    }
                    if (wcs[i].opcode == io.rdmablock.rdma.verbs.WcOpcode.RECV) {
                        stash.addLast(new long[]{wcs[i].wrId, wcs[i].byteLen});
                    } else if (wcs[i].wrId == wrId) {
                        done = true;
                    }
                }
                if (done) {
                    return true;
                }
            }
            return false;
        }

        private boolean rdmaRead(MemorySegment sgl, long localOffset, int len) {
            SendWr w = new SendWr();
            w.wrId = (1L << 50) + (++seq);
            w.opcode = WrOpcode.RDMA_READ;
            w.sendFlags = SendWr.SIGNALED;
            w.sgList[0].set(stagingMr, localOffset, len);
            w.numSge = 1;
            w.remoteAddr = SglDescriptor.address(sgl);
            w.rkey = SglDescriptor.key(sgl);
            qp.postSend(w);
            return awaitOp(w.wrId);
        }

        private void handle(int index, int byteLen) {
            if (qid > 0) {
                commands.incrementAndGet();
            }
            MemorySegment cap = recvBuf.asSlice((long) index * capsuleBytes, capsuleBytes);
            int opcode = SqeDescriptor.opcode(cap);
            int cid = SqeDescriptor.cid(cap);
            MemorySegment sgl = SqeDescriptor.sgl1(cap);
            int dw0 = 0;
            int dw1 = 0;
            SendWr write = null;
            boolean strict = nvmet;
            int status = strict ? NvmetRules.check(cap, qid, (csts & AdminCommands.CSTS_RDY) != 0) : 0;
            if (status == 0 && strict) {
                status = NvmetRules.checkTransfer(cap, qid, lbaSize);
            }
            if (status != 0) {
                refusals.incrementAndGet();
                lastRefusal = "qid=" + qid + ", opcode=0x" + Integer.toHexString(opcode) + ", sgl id=0x"
                        + Integer.toHexString(SglDescriptor.id(sgl)) + ": " + NvmeStatus.describe(status);
            } else if (opcode == Opcodes.FABRICS) {
                int fct = SqeDescriptor.fctype(cap);
                if (fct == Opcodes.FCTYPE_CONNECT) {
                    if (SglDescriptor.id(sgl) == SglDescriptor.ID_DATA_BLOCK_OFFSET) {
                        MemorySegment.copy(cap, SqeDescriptor.LENGTH + SglDescriptor.address(sgl), staging, 0,
                                ConnectDataDescriptor.DATA_LENGTH);
                    } else if (!rdmaRead(sgl, 0, ConnectDataDescriptor.DATA_LENGTH)) {
                        return;
                    }
                    int sqsize = Short.toUnsignedInt(cap.get(ValueLayout.JAVA_SHORT_UNALIGNED,
                            ConnectDataDescriptor.SQSIZE_OFFSET));
                    lastHostnqn = ConnectDataDescriptor.hostnqn(staging);
                    if (!ConnectDataDescriptor.subnqn(staging).equals(subnqn)) {
                        status = NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_PARAMETERS);
                    } else if (strict && sqsize > (FakeTarget.this.capValue() & 0xFFFF)) {
                        status = NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_PARAMETERS);
                        dw0 = ConnectDataDescriptor.SQSIZE_OFFSET << 16; // nvmet_install_queue
                    } else {
                        dw0 = qid == 0 ? cntlids.getAndIncrement() : ConnectDataDescriptor.cntlid(staging);
                        if (qid == 0) {
                            cc = 0;
                            csts = 0;
                        }
                    }
                } else if (fct == Opcodes.FCTYPE_PROPERTY_GET) {
                    long v = switch (SqeDescriptor.cdw(cap, 11)) {
                        case Opcodes.PROP_CAP -> capValue();
                        case Opcodes.PROP_CC -> cc;
                        case Opcodes.PROP_CSTS -> strict ? csts : AdminCommands.CSTS_RDY;
                        default -> 0;
                    };
                    dw0 = (int) v;
                    dw1 = (SqeDescriptor.cdw(cap, 10) & 1) != 0 ? (int) (v >>> 32) : 0;
                } else if (fct == Opcodes.FCTYPE_PROPERTY_SET && SqeDescriptor.cdw(cap, 11) == Opcodes.PROP_CC) {
                    cc = SqeDescriptor.cdw(cap, 12);
                    csts = fatalOnEnable ? AdminCommands.CSTS_CFS : NvmetRules.cstsAfter(cc);
                }
            } else if (qid == 0) {
                if (opcode == Opcodes.ADMIN_ASYNC_EVENT_REQUEST) {
                    postRecv(index); // held until an ANA change notice
                    aerCid = cid;
                    return;
                }
                if (opcode == Opcodes.ADMIN_GET_LOG_PAGE && (SqeDescriptor.cdw(cap, 10) & 0xFF) == AdminCommands.LID_ANA) {
                    int st = anaState;
                    if (st == 0) {
                        status = NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD);
                    } else {
                        MemorySegment d = staging.asSlice(0, 4096);
                        d.fill((byte) 0);
                        int changes = anaChanges.get();
                        AnaLog.encode(d, changes, java.util.List.of(new AnaLog.Group(1, changes, st,
                                java.util.List.of(1))));
                        write = rdmaWrite(sgl, 0, 4096);
                    }
                }
                if (opcode == Opcodes.ADMIN_SET_FEATURES && SqeDescriptor.cdw(cap, 10) == 0x07) {
                    dw0 = (grantedQueues - 1) | (grantedQueues - 1) << 16;
                }
                if (opcode == Opcodes.ADMIN_IDENTIFY) {
                    MemorySegment d = staging.asSlice(0, 4096);
                    int cns = SqeDescriptor.cdw(cap, 10);
                    int nsid = SqeDescriptor.nsid(cap);
                    if (cns == Opcodes.CNS_CONTROLLER && strict) {
                        NvmetRules.identifyController(d, serial, 1, mdtsBytes, subnqn);
                    } else if (cns == Opcodes.CNS_CONTROLLER) {
                        IdentifyControllerDescriptor.encode(d, new IdentifyControllerDescriptor.Info(serial, "fake",
                                "1", 1, mdtsBytes, 128, 1, true, subnqn, IN_CAPSULE));
                    } else if (cns == Opcodes.CNS_ACTIVE_NAMESPACE_LIST) {
                        NvmetRules.activeNamespaceList(d, nsid, activeNsids);
                    } else if (strict && !active(nsid)) {
                        d.fill((byte) 0); // nvmet_execute_identify_ns: inactive nsid
                    } else {
                        IdentifyNamespaceDescriptor.encode(d, new IdentifyNamespaceDescriptor.Info(
                                capacityBytes / lbaSize, 0, lbaSize, zeroesAfterTrim));
                    }
                    write = rdmaWrite(sgl, 0, 4096);
                }
            } else if (injectedResponses.get() > 0 && injectedResponses.getAndDecrement() > 0) {
                status = injectedStatus;
            } else if (anaState != 0 && anaState != AnaLog.OPTIMIZED && anaState != AnaLog.NON_OPTIMIZED) {
                int st = anaState;
                status = NvmeStatus.of(3, st == AnaLog.INACCESSIBLE ? 0x02 : st == AnaLog.PERSISTENT_LOSS ? 0x01 : 0x03,
                        false);
            } else if (strict && !active(SqeDescriptor.nsid(cap))) { // nvmet_req_find_ns
                status = NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_INVALID_NAMESPACE, true);
            } else {
                long cap0 = capacityBytes / lbaSize;
                long slba = SqeDescriptor.slba(cap);
                int nlb = SqeDescriptor.blockCount(cap);
                long off = slba * lbaSize;
                int len = nlb * lbaSize;
                if (slba == poisonSlba && (opcode == Opcodes.IO_READ || opcode == Opcodes.IO_WRITE)) {
                    stopped = true;
                    id.close(); // the host sees the connection fail
                    return;
                }
                boolean rw = opcode == Opcodes.IO_READ || opcode == Opcodes.IO_WRITE || opcode == Opcodes.IO_WRITE_ZEROES;
                if (rw && (slba < 0 || slba + nlb > cap0)) {
                    status = NvmeStatus.generic(NvmeStatus.SC_LBA_OUT_OF_RANGE);
                } else if ((opcode == Opcodes.IO_READ || opcode == Opcodes.IO_WRITE) && mdtsBytes > 0 && len > mdtsBytes) {
                    status = NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD);
                } else if (opcode == Opcodes.IO_READ) {
                    MemorySegment.copy(store, off, staging, 0, len);
                    write = rdmaWrite(sgl, 0, len);
                } else if (opcode == Opcodes.IO_WRITE) {
                    if (SglDescriptor.id(sgl) == SglDescriptor.ID_DATA_BLOCK_OFFSET) {
                        MemorySegment.copy(cap, SqeDescriptor.LENGTH, store, off, len);
                    } else {
                        if (!rdmaRead(sgl, 0, len)) {
                            return;
                        }
                        MemorySegment.copy(staging, 0, store, off, len);
                    }
                } else if (opcode == Opcodes.IO_WRITE_ZEROES) {
                    store.asSlice(off, len).fill((byte) 0);
                } else if (opcode == Opcodes.IO_DATASET_MANAGEMENT) {
                    MemorySegment r = cap.asSlice(SqeDescriptor.LENGTH);
                    long s = DsmRangeDescriptor.slba(r, 0);
                    long n = Integer.toUnsignedLong(DsmRangeDescriptor.blockCount(r, 0));
                    if (zeroesAfterTrim) {
                        store.asSlice(s * lbaSize, n * lbaSize).fill((byte) 0);
                    }
                } else if (opcode != Opcodes.IO_FLUSH) {
                    status = NvmeStatus.generic(NvmeStatus.SC_INVALID_OPCODE);
                }
            }
            boolean failHere = qid > 0 && qid == failQid;
            if (failHere) {
                status = NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR);
            }
            postRecv(index);
            if (dropResponses.get() > 0 && qid > 0 && dropResponses.getAndDecrement() > 0) {
                return;
            }
            java.util.concurrent.CountDownLatch hold = holdResponses;
            if (hold != null && qid > 0 && !failHere) {
                try {
                    hold.await(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            MemorySegment r = rsp.asSlice(16L * index, 16);
            CqeDescriptor.set(r, dw0, 0, qid, cid, status);
            r.set(ValueLayout.JAVA_INT_UNALIGNED, 4, dw1);
            SendWr send = new SendWr();
            send.wrId = (2L << 50) + (++seq);
            send.opcode = WrOpcode.SEND;
            send.sendFlags = SendWr.SIGNALED;
            send.sgList[0].set(rspMr, 16L * index, 16);
            send.numSge = 1;
            if (duplicateResponses && qid > 0) {
                SendWr dup = new SendWr();
                dup.wrId = 3L << 50;
                dup.opcode = WrOpcode.SEND;
                dup.sendFlags = SendWr.SIGNALED;
                dup.sgList[0].set(rspMr, 16L * index, 16);
                dup.numSge = 1;
                send.next = dup;
            }
            if (write != null) {
                write.next = send;
                qp.postSend(write);
                awaitOp(send.wrId); // staging is reused by the next command: wait until the data left
            } else {
                qp.postSend(send);
            }
        }

        private SendWr rdmaWrite(MemorySegment sgl, long localOffset, int len) {
            SendWr w = new SendWr();
            w.wrId = 4L << 50;
            w.opcode = WrOpcode.RDMA_WRITE;
            w.sendFlags = 0;
            w.sgList[0].set(stagingMr, localOffset, len);
            w.numSge = 1;
            w.remoteAddr = SglDescriptor.address(sgl);
            w.rkey = SglDescriptor.key(sgl);
            return w;
        }
    }
}
