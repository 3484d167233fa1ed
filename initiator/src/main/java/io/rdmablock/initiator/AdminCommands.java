package io.rdmablock.initiator;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WrOpcode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;

/**
 * The admin-queue commands the host's {@link Controller} sends, one method per command, each waiting at most the
 * given time (controller thread only). Capsule layouts: NVMe Base Specification 2.0 section 5 (Identify 5.17,
 * Keep Alive 5.21, Asynchronous Event Request 5.2) and NVMe over Fabrics 1.1 section 3.4 (Property Get/Set).
 */
final class AdminCommands {
    private static final Logger LOG = LoggerFactory.getLogger(AdminCommands.class);
    /** CC: EN=1, IOSQES=6 (64-byte SQE), IOCQES=4 (16-byte CQE). */
    private static final int CC_ENABLE = 1 | 6 << 16 | 4 << 20;

    private AdminCommands() {
    }

    /**
     * Property Set CC.EN=1, then Property Get CSTS until RDY=1 (every 10 ms).
     *
     * @throws BlockIoException when CSTS.RDY stays 0 for {@code timeoutNs}
     */
    static void enable(QueueConnection a, long timeoutNs) {
        QueueConnection.Completion set = a.execSync(sqe -> {
            SqeDescriptor.clear(sqe);
            SqeDescriptor.opcode(sqe, Opcodes.FABRICS);
            SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
            SqeDescriptor.fctype(sqe, Opcodes.FCTYPE_PROPERTY_SET);
            SqeDescriptor.cdw(sqe, 10, 0); // ATTRIB: 4-byte property
            SqeDescriptor.cdw(sqe, 11, Opcodes.PROP_CC);
            SqeDescriptor.cdw(sqe, 12, CC_ENABLE);
            SqeDescriptor.cdw(sqe, 13, 0);
        }, timeoutNs);
        if (set.status() != NvmeStatus.SUCCESS) {
            LOG.warn("Property Set CC.EN=1 answered {}; continuing", NvmeStatus.describe(set.status()));
            return;
        }
        long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            QueueConnection.Completion get = a.execSync(sqe -> {
                SqeDescriptor.clear(sqe);
                SqeDescriptor.opcode(sqe, Opcodes.FABRICS);
                SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
                SqeDescriptor.fctype(sqe, Opcodes.FCTYPE_PROPERTY_GET);
                SqeDescriptor.cdw(sqe, 10, 0);
                SqeDescriptor.cdw(sqe, 11, Opcodes.PROP_CSTS);
            }, timeoutNs);
            if (get.status() != NvmeStatus.SUCCESS || (get.dw0() & 1) != 0) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new BlockIoException("controller did not become ready (CSTS.RDY=0) within "
                        + timeoutNs / 1_000_000 + " ms");
            }
            LockSupport.parkNanos(10_000_000);
        }
    }

    /**
     * Identify with CNS {@code cns} for {@code nsid}; the 4096-byte data structure lands in the queue memory's
     * Identify area ({@link QueueMemory#identify()}).
     *
     * @throws NvmeStatusException when the controller answers an error status
     */
    static void identify(QueueConnection a, int nsid, int cns, long timeoutNs) {
        QueueConnection.Completion r = a.execSync(sqe -> {
            SqeDescriptor.clear(sqe);
            SqeDescriptor.opcode(sqe, Opcodes.ADMIN_IDENTIFY);
            SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
            SqeDescriptor.nsid(sqe, nsid);
            SqeDescriptor.cdw(sqe, 10, cns);
            SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), a.mem.mr.address() + a.mem.identifyOffset(),
                    QueueMemory.IDENTIFY_BYTES, a.mem.mr.rkey());
        }, timeoutNs);
        if (r.status() != NvmeStatus.SUCCESS) {
            throw new NvmeStatusException("Identify failed: cns=" + cns + ", nsid=" + nsid,
                    NvmeStatus.sct(r.status()), NvmeStatus.sc(r.status()), NvmeStatus.dnr(r.status()));
        }
    }

    /** One Keep Alive, waited for at most {@code timeoutNs}; returns its completion. */
    static QueueConnection.Completion keepAlive(QueueConnection a, long timeoutNs) {
        return a.execSync(sqe -> {
            SqeDescriptor.clear(sqe);
            SqeDescriptor.opcode(sqe, Opcodes.ADMIN_KEEP_ALIVE);
            SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
            SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), 0, 0, 0);
        }, timeoutNs);
    }

    /**
     * Posts the one Asynchronous Event Request (cid {@link QueueConnection#AER_CID}, capsule slot 1) without
     * waiting: it completes when the controller has an event (a namespace attribute change after a resize).
     */
    static void postAsyncEventRequest(QueueConnection a) {
        MemorySegment sqe = a.mem.capsule(1);
        SqeDescriptor.clear(sqe);
        SqeDescriptor.opcode(sqe, Opcodes.ADMIN_ASYNC_EVENT_REQUEST);
        SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.cid(sqe, QueueConnection.AER_CID);
        SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), 0, 0, 0);
        SendWr wr = new SendWr(1);
        wr.wrId = QueueConnection.SEND_TAG | 1;
        wr.opcode = WrOpcode.SEND;
        wr.sendFlags = SendWr.SIGNALED;
        wr.sgList[0].set(a.mem.mr, a.mem.capsuleOffset(1), SqeDescriptor.LENGTH);
        wr.numSge = 1;
        a.qp.postSend(wr);
    }
}
