package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.CmPrivateData;
import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.RecvWr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * A raw NVMe/RDMA host for target tests, written against the verbs API and the fabric descriptors only: one queue
 * (CM handshake with private data, RECVs for 16-byte responses, capsule slots to SEND) and a registered host data
 * region between two guard regions that are registered for remote access too, so a target that strays outside the
 * SGL it was given would succeed in writing them ({@link #guardsIntact()} catches it).
 */
final class RawHost implements AutoCloseable {
    static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);
    static final int GUARD_BYTES = 64 * 1024;
    static final byte GUARD = (byte) 0xA5;
    static final int CAPSULE_BYTES = 64 + 8192;

    final CmId id;
    final int qid;
    final int entries;
    private final Arena arena = Arena.ofShared();
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final MemoryRegion capsuleMr;
    private final MemoryRegion responseMr;
    private final MemoryRegion dataMr;
    private final long dataBytes;
    private final RecvWr[] recvs;
    private final SendWr send = new SendWr();
    private final WorkCompletion[] wcs = WorkCompletion.array(64);
    private final ArrayDeque<Cqe> responses = new ArrayDeque<>();
    private WcStatus error;
    private final MemorySegment guardPattern = Arena.ofAuto().allocate(GUARD_BYTES).fill(GUARD);

    /** A response capsule, or a transport error ({@link #error} non-null). */
    record Cqe(int dw0, int dw1, int sqhd, int sqid, int cid, int status, WcStatus error) {
        boolean ok() {
            return error == null && status == 0;
        }
    }

    private RawHost(CmId id, int qid, int entries, long dataBytes) {
        this.id = id;
        this.qid = qid;
        this.entries = entries;
        this.dataBytes = dataBytes;
        pd = id.device().allocPd();
        cq = id.device().createCq(4 * entries + 16);
        QpInitAttr a = new QpInitAttr().pd(pd).cq(cq);
        a.maxSendWr = 2 * entries + 2;
        a.maxRecvWr = entries;
        qp = id.createQp(a);
        capsuleMr = pd.registerMemory(arena.allocate((long) CAPSULE_BYTES * (entries + 1), 4096), Access.LOCAL_WRITE);
        responseMr = pd.registerMemory(arena.allocate(16L * entries, 64), Access.LOCAL_WRITE);
        MemorySegment whole = arena.allocate(dataBytes + 2L * GUARD_BYTES, 4096);
        whole.fill(GUARD);
        dataMr = pd.registerMemory(whole, Access.ALL);
        recvs = new RecvWr[entries];
        for (int i = 0; i < entries; i++) {
            RecvWr r = new RecvWr();
            r.wrId = i;
            r.numSge = 1;
            r.sgList[0].set(responseMr, 16L * i, 16);
            recvs[i] = r;
            qp.postRecv(r);
        }
        send.numSge = 1;
        send.opcode = io.rdmablock.rdma.verbs.WrOpcode.SEND;
        send.sendFlags = SendWr.SIGNALED;
    }

    /** Connects queue {@code qid} with {@code entries} (HSQSIZE = entries - 1, HRQSIZE = entries). */
    static RawHost connect(VerbsProvider provider, InetSocketAddress target, int qid, int entries, long dataBytes) {
        return connect(provider, target, new CmPrivateData.Request(0, qid, entries, entries - 1, 0).encode(), qid,
                Math.max(entries, 2), dataBytes);
    }

    /** Connects with raw private data (may be invalid); the local queue gets {@code entries} RECVs. */
    static RawHost connect(VerbsProvider provider, InetSocketAddress target, byte[] privateData, int qid, int entries,
                           long dataBytes) {
        CmId id = provider.createId();
        RawHost h = null;
        try {
            id.resolve(target, TIMEOUT_NS);
            h = new RawHost(id, qid, entries, dataBytes);
            id.connect(privateData, TIMEOUT_NS);
            return h;
        } catch (RuntimeException e) {
            if (h != null) {
                h.close();
            } else {
                id.close();
            }
            throw e;
        }
    }

    /** Capsule slot {@code slot} (64-byte SQE + in-capsule data), zeroed. */
    MemorySegment capsule(int slot) {
        MemorySegment s = capsuleMr.segment().asSlice((long) CAPSULE_BYTES * slot, CAPSULE_BYTES);
        s.fill((byte) 0);
        return s;
    }

    /** The host data region (between the guards). */
    MemorySegment data() {
        return dataMr.segment().asSlice(GUARD_BYTES, dataBytes);
    }

    long dataAddress(long offset) {
        return dataMr.address() + GUARD_BYTES + offset;
    }

    int rkey() {
        return dataMr.rkey();
    }

    /** True when neither guard region was written. */
    boolean guardsIntact() {
        MemorySegment whole = dataMr.segment();
        return whole.asSlice(0, GUARD_BYTES).mismatch(guardPattern) == -1
                && whole.asSlice(GUARD_BYTES + dataBytes, GUARD_BYTES).mismatch(guardPattern) == -1;
    }

    long dataBytes() {
        return dataBytes;
    }

    /** SENDs {@code lengthBytes} of capsule slot {@code slot}. */
    void post(int slot, int lengthBytes) {
        send.wrId = 1_000_000L + slot;
        send.sgList[0].set(capsuleMr, (long) CAPSULE_BYTES * slot, lengthBytes);
        qp.postSend(send);
    }

    /** The next response (or transport error); null on timeout. RECVs are reposted. */
    /** The next response, which must arrive within {@code timeoutNs} ({@code what} says why) with {@code cid} and {@code status}. */
    Cqe awaitAnswer(long timeoutNs, int cid, int status, String what) {
        Cqe c = await(timeoutNs);
        org.junit.jupiter.api.Assertions.assertNotNull(c, what);
        org.junit.jupiter.api.Assertions.assertEquals(cid, c.cid(), what + ": cid");
        org.junit.jupiter.api.Assertions.assertEquals(status, c.status(),
                what + ": " + io.rdmablock.rdma.fabric.NvmeStatus.describe(c.status()));
        return c;
    }

    Cqe await(long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        while (responses.isEmpty()) {
            if (error != null) {
                return new Cqe(0, 0, 0, 0, -1, -1, error);
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            int n = cq.await(wcs, wcs.length, Math.min(left, 100_000_000L));
            for (int i = 0; i < n; i++) {
                handle(wcs[i]);
            }
        }
        return responses.poll();
    }

    /** A work completion: an error is kept in {@link #error}, a RECV becomes a response (RECV reposted). */
    private void handle(WorkCompletion wc) {
        if (!wc.ok()) {
            if (error == null) {
                error = wc.status;
            }
            return;
        }
        if (wc.opcode == WcOpcode.RECV) {
            MemorySegment r = responseMr.segment().asSlice(16L * wc.wrId, 16);
            responses.add(new Cqe(CqeDescriptor.dw0(r), CqeDescriptor.dw1(r), CqeDescriptor.sqhd(r),
                    CqeDescriptor.sqid(r), CqeDescriptor.cid(r), CqeDescriptor.status(r), null));
            qp.postRecv(recvs[(int) wc.wrId]);
        }
    }

    /**
     * RDMA READ of {@code lengthBytes} at {@code remoteAddress} / {@code rkey} of the peer (the target's queue pair
     * answers it) into host data at {@code dataOffset}; waits for its completion. Responses arriving meanwhile are
     * kept for {@link #await}.
     *
     * @return the READ's completion status, or null on timeout
     */
    WcStatus rdmaRead(long dataOffset, int lengthBytes, long remoteAddress, int rkey) {
        final long wrId = 3_000_000L;
        SendWr w = new SendWr();
        w.wrId = wrId;
        w.opcode = io.rdmablock.rdma.verbs.WrOpcode.RDMA_READ;
        w.sendFlags = SendWr.SIGNALED;
        w.numSge = 1;
        w.sgList[0].set(dataMr, GUARD_BYTES + dataOffset, lengthBytes);
        w.remoteAddr = remoteAddress;
        w.rkey = rkey;
        qp.postSend(w);
        long deadline = System.nanoTime() + TIMEOUT_NS;
        while (System.nanoTime() < deadline) {
            int n = cq.await(wcs, wcs.length, 100_000_000L);
            WcStatus read = null;
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs[i];
                if (wc.wrId == wrId) {
                    read = wc.status;
                    if (!wc.ok() && error == null) {
                        error = wc.status;
                    }
                } else {
                    handle(wc);
                }
            }
            if (read != null) {
                return read;
            }
        }
        return null;
    }

    Cqe await() {
        return await(TIMEOUT_NS);
    }

    /** Posts slot 0 with a 64-byte capsule and waits for its response. */
    Cqe exec(MemorySegment capsule) {
        return exec(capsule, SqeDescriptor.LENGTH);
    }

    Cqe exec(MemorySegment capsule, int lengthBytes) {
        long slot = (capsule.address() - capsuleMr.address()) / CAPSULE_BYTES;
        post((int) slot, lengthBytes);
        return await();
    }

    /** Transport error seen so far, or null. */
    WcStatus error() {
        return error;
    }

    // ---- capsule builders ----

    /** Fabrics Connect with the 1024-byte data at host data offset {@code dataOffset} via a keyed SGL. */
    MemorySegment connectCapsule(int cid, int sqsize, int katoMs, String subnqn, String hostnqn, int cntlid,
                                 long dataOffset) {
        MemorySegment c = capsule(0);
        ConnectDataDescriptor.sqe(c, cid, qid, sqsize, katoMs);
        ConnectDataDescriptor.data(data().asSlice(dataOffset, ConnectDataDescriptor.DATA_LENGTH), null, cntlid,
                subnqn, hostnqn);
        SglDescriptor.keyed(SqeDescriptor.sgl1(c), dataAddress(dataOffset), ConnectDataDescriptor.DATA_LENGTH, rkey());
        return c;
    }

    /** Connect on this queue; returns the response. */
    Cqe fabricConnect(int sqsize, int katoMs, String subnqn, String hostnqn, int cntlid) {
        return exec(connectCapsule(1, sqsize, katoMs, subnqn, hostnqn, cntlid, 0));
    }

    /** A command SQE in slot {@code slot} with opcode/cid/nsid, PSDT = SGL. */
    MemorySegment command(int slot, int opcode, int cid, int nsid) {
        MemorySegment c = capsule(slot);
        SqeDescriptor.opcode(c, opcode);
        SqeDescriptor.flags(c, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.cid(c, cid);
        SqeDescriptor.nsid(c, nsid);
        return c;
    }

    /** Identify into host data offset 0 (4096 bytes). */
    Cqe identify(int cns, int nsid) {
        MemorySegment c = command(0, Opcodes.ADMIN_IDENTIFY, 7, nsid);
        SqeDescriptor.cdw(c, 10, cns);
        SglDescriptor.keyed(SqeDescriptor.sgl1(c), dataAddress(0), Opcodes.IDENTIFY_DATA_LENGTH, rkey());
        return exec(c);
    }

    /** READ/WRITE SQE in {@code slot}: keyed SGL over host data at {@code dataOffset} of {@code sglBytes}. */
    MemorySegment rw(int slot, int opcode, int cid, long slba, int blocks, boolean fua, long dataOffset,
                     int sglBytes) {
        MemorySegment c = command(slot, opcode, cid, 1);
        SqeDescriptor.slba(c, slba);
        SqeDescriptor.blockCount(c, blocks, fua ? SqeDescriptor.CDW12_FUA : 0);
        SglDescriptor.keyed(SqeDescriptor.sgl1(c), dataAddress(dataOffset), sglBytes, rkey());
        return c;
    }

    /**
     * WRITE (cid {@code cid}, capsule slot 0) of 8 blocks of 512 bytes at {@code slba} from host data offset 0,
     * filled with {@code fill} first, {@code epoch} in CDW2-3 (0: none); returns the response.
     */
    Cqe writeBlocks(int cid, long slba, int fill, long epoch) {
        data().asSlice(0, 4096).fill((byte) fill);
        MemorySegment c = rw(0, Opcodes.IO_WRITE, cid, slba, 8, false, 0, 4096);
        SqeDescriptor.cdw23(c, epoch);
        return exec(c);
    }

    /** READ (cid {@code cid}, capsule {@code slot}) of 8 blocks of 512 bytes at {@code slba} into host data 8192. */
    Cqe readBlocks(int slot, int cid, long slba) {
        return exec(rw(slot, Opcodes.IO_READ, cid, slba, 8, false, 8192, 4096));
    }

    /** Get Log Page into host data offset 0: {@code lengthBytes} from byte {@code offsetBytes}; keyed SGL (4Fh). */
    Cqe getLogPage(int cid, int lid, int nsid, int lengthBytes, long offsetBytes, boolean rae) {
        MemorySegment c = capsule(0);
        io.rdmablock.rdma.fabric.LogPageDescriptor.sqe(c, cid, nsid, lid, rae, lengthBytes, offsetBytes);
        SglDescriptor.keyedInvalidate(SqeDescriptor.sgl1(c), dataAddress(0), lengthBytes, rkey());
        return exec(c);
    }

    /**
     * A command without data as Linux sends it ({@code nvme_rdma_set_sg_null}): keyed SGL 40h with address 0,
     * length 0, key 0.
     */
    MemorySegment nullSglCommand(int slot, int opcode, int cid, int nsid) {
        MemorySegment c = command(slot, opcode, cid, nsid);
        SglDescriptor.keyed(SqeDescriptor.sgl1(c), 0, 0, 0);
        return c;
    }

    /** Fabrics Property Get of a 4-byte (or, for CAP, 8-byte) property with a null keyed SGL. */
    Cqe propertyGet(int cid, int offset) {
        MemorySegment c = nullSglCommand(0, Opcodes.FABRICS, cid, 0);
        SqeDescriptor.fctype(c, Opcodes.FCTYPE_PROPERTY_GET);
        SqeDescriptor.cdw(c, 10, offset == Opcodes.PROP_CAP ? 1 : 0);
        SqeDescriptor.cdw(c, 11, offset);
        return exec(c);
    }

    /** Keep Alive on slot {@code slot}. */
    MemorySegment keepAlive(int slot, int cid) {
        return command(slot, Opcodes.ADMIN_KEEP_ALIVE, cid, 0);
    }

    @Override
    public void close() {
        try {
            id.close();
        } catch (RuntimeException ignored) {
            // best effort
        }
        dataMr.close();
        responseMr.close();
        capsuleMr.close();
        cq.close();
        pd.close();
        arena.close();
    }
}
