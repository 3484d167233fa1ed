package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WrOpcode;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;

/**
 * The admin-queue commands a host sends (the initiator's controller, a node's peer association), one method per
 * command, each run with {@link QueueConnection#execSync} and waiting at most the given time (on the admin queue's
 * owner thread only). Capsule layouts: NVMe Base Specification 2.0 section 5 (Identify 5.17, Keep Alive 5.21,
 * Asynchronous Event Request 5.2) and NVMe over Fabrics 1.1 section 3.4 (Property Get/Set); the sequence as Linux
 * {@code nvme_rdma_setup_ctrl} / {@code nvme_enable_ctrl} ({@code drivers/nvme/host/rdma.c}, {@code core.c}).
 *
 * <p>Errors: {@link NvmfStatusException} for an error status, {@link NvmfHostException} for a timeout or a failed
 * queue (from {@link QueueConnection#execSync}).
 */
public final class AdminCommands {
    /** CC: EN=1, CSS=0 (NVM), MPS=0, AMS=0, SHN=0, IOSQES=6 (64-byte SQE), IOCQES=4 (16-byte CQE). */
    public static final int CC_ENABLE = 1 | 6 << 16 | 4 << 20;
    /** CSTS bit 0: Ready. */
    public static final int CSTS_RDY = 1;
    /** CSTS bit 1: Controller Fatal Status. */
    public static final int CSTS_CFS = 1 << 1;
    /** Set Features: Number of Queues. */
    public static final int FID_NUMBER_OF_QUEUES = 0x07;
    /** Get Log Page: Changed Namespace List. */
    public static final int LID_CHANGED_NAMESPACES = 0x04;
    /** Get Log Page: Asymmetric Namespace Access (NVMe Base 1.4 section 5.14.1.12). */
    public static final int LID_ANA = 0x0C;
    /** Asynchronous Event (completion dword 0): type Notice. */
    public static final int AEN_TYPE_NOTICE = 2;
    /** Asynchronous Event info of a Notice: Namespace Attribute Changed. */
    public static final int AEN_INFO_NS_ATTRIBUTE = 0;
    /** Asynchronous Event info of a Notice: Asymmetric Namespace Access Change. */
    public static final int AEN_INFO_ANA_CHANGE = 3;

    private AdminCommands() {
    }

    /**
     * Property Get CAP (offset 00h, 8 bytes; NVMe-oF 1.1 section 3.4, NVMe Base 2.0 section 3.1.3.1).
     *
     * @throws NvmfStatusException when the controller answers an error status
     */
    public static long readCap(QueueConnection a, long timeoutNs) {
        QueueConnection.Completion r = a.execSync(sqe -> {
            fabrics(sqe, Opcodes.FCTYPE_PROPERTY_GET);
            SqeDescriptor.cdw(sqe, 10, 1); // ATTRIB: 8-byte property
            SqeDescriptor.cdw(sqe, 11, Opcodes.PROP_CAP);
        }, timeoutNs);
        check(r, "Property Get CAP");
        return Integer.toUnsignedLong(r.dw0()) | (long) r.dw1() << 32;
    }

    /**
     * Property Set CC as a Linux host writes it ({@code nvme_enable_ctrl}: EN=1, CSS=000b NVM, MPS=0 (4 KiB),
     * AMS=000b round robin, SHN=0, IOSQES=6, IOCQES=4), then Property Get CSTS every 10 ms until RDY=1
     * (NVMe Base 2.0 section 3.5.1). Linux nvmet answers a CC whose IOSQES/IOCQES/MPS/AMS/CSS it cannot use with
     * CSTS.CFS=1 ({@code nvmet_start_ctrl}) and every other command before CSTS.RDY=1 with Command Sequence Error.
     *
     * @param readyTimeoutNs how long CSTS.RDY may stay 0 (CAP.TO)
     * @throws NvmfStatusException when the Property Set or Get is answered with an error status
     * @throws NvmfHostException   when CSTS.CFS=1 (controller fatal status) or CSTS.RDY stays 0 for readyTimeoutNs
     */
    public static void enable(QueueConnection a, long timeoutNs, long readyTimeoutNs) {
        QueueConnection.Completion set = a.execSync(sqe -> {
            fabrics(sqe, Opcodes.FCTYPE_PROPERTY_SET);
            SqeDescriptor.cdw(sqe, 10, 0); // ATTRIB: 4-byte property
            SqeDescriptor.cdw(sqe, 11, Opcodes.PROP_CC);
            SqeDescriptor.cdw(sqe, 12, CC_ENABLE);
            SqeDescriptor.cdw(sqe, 13, 0);
        }, timeoutNs);
        check(set, "Property Set CC=0x" + Integer.toHexString(CC_ENABLE));
        long deadline = System.nanoTime() + readyTimeoutNs;
        while (true) {
            QueueConnection.Completion get = a.execSync(sqe -> {
                fabrics(sqe, Opcodes.FCTYPE_PROPERTY_GET);
                SqeDescriptor.cdw(sqe, 10, 0);
                SqeDescriptor.cdw(sqe, 11, Opcodes.PROP_CSTS);
            }, timeoutNs);
            check(get, "Property Get CSTS");
            int csts = get.dw0();
            if ((csts & CSTS_CFS) != 0) {
                throw new NvmfHostException("controller fatal status after CC=0x" + Integer.toHexString(CC_ENABLE)
                        + ": CSTS=0x" + Integer.toHexString(csts) + " (the controller refused the configuration)");
            }
            if ((csts & CSTS_RDY) != 0) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new NvmfHostException("controller did not become ready (CSTS.RDY=0) within "
                        + readyTimeoutNs / 1_000_000 + " ms (CAP.TO)");
            }
            LockSupport.parkNanos(10_000_000);
        }
    }

    /**
     * Set Features Number of Queues (FID 07h; NVMe Base 2.0 section 5.27.1.5): asks for {@code count} I/O submission
     * and completion queues; returns how many the controller allocated (min(NSQA, NCQA) + 1, at least 1), or
     * {@code count} when the controller answers an error status (a target without the feature; the I/O queue
     * Connects then tell).
     */
    public static int setNumberOfQueues(QueueConnection a, int count, long timeoutNs) {
        QueueConnection.Completion r = a.execSync(sqe -> {
            noData(sqe, Opcodes.ADMIN_SET_FEATURES);
            SqeDescriptor.cdw(sqe, 10, FID_NUMBER_OF_QUEUES);
            SqeDescriptor.cdw(sqe, 11, (count - 1) | (count - 1) << 16); // NSQR, NCQR: 0-based
        }, timeoutNs);
        if (r.status() != NvmeStatus.SUCCESS) {
            return count;
        }
        int nsqa = r.dw0() & 0xFFFF;
        int ncqa = r.dw0() >>> 16;
        return Math.min(nsqa, ncqa) + 1;
    }

    /**
     * Get Log Page Changed Namespace List (LID 04h, 4096 bytes, RAE=0; NVMe Base 2.0 section 5.16.1.5) into the
     * Identify area: reading it re-arms the controller's namespace-attribute notices (Linux nvmet masks them until
     * then, {@code nvmet_clear_aen_bit}). Returns the completion status.
     */
    public static int readChangedNamespaceLog(QueueConnection a, long timeoutNs) {
        return a.execSync(sqe -> {
            SqeDescriptor.clear(sqe);
            SqeDescriptor.opcode(sqe, Opcodes.ADMIN_GET_LOG_PAGE);
            SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
            SqeDescriptor.nsid(sqe, 0xFFFFFFFF);
            SqeDescriptor.cdw(sqe, 10, LID_CHANGED_NAMESPACES | (QueueMemory.IDENTIFY_BYTES / 4 - 1) << 16);
            SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), a.memory().mr().address() + a.memory().identifyOffset(),
                    QueueMemory.IDENTIFY_BYTES, a.memory().mr().rkey());
        }, timeoutNs).status();
    }

    /**
     * Get Log Page ANA (LID 0Ch, 4096 bytes, RAE=0, all groups with their NSIDs) into the Identify area, decoded.
     * Reading it re-arms the controller's ANA Change notices.
     *
     * @throws NvmfStatusException when the controller answers an error status (no ANA reporting)
     */
    public static AnaLog readAnaLog(QueueConnection a, long timeoutNs) {
        QueueConnection.Completion r = a.execSync(sqe -> {
            SqeDescriptor.clear(sqe);
            SqeDescriptor.opcode(sqe, Opcodes.ADMIN_GET_LOG_PAGE);
            SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
            SqeDescriptor.nsid(sqe, 0xFFFFFFFF);
            SqeDescriptor.cdw(sqe, 10, LID_ANA | (QueueMemory.IDENTIFY_BYTES / 4 - 1) << 16);
            SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), a.memory().mr().address() + a.memory().identifyOffset(),
                    QueueMemory.IDENTIFY_BYTES, a.memory().mr().rkey());
        }, timeoutNs);
        check(r, "Get Log Page ANA");
        return AnaLog.decode(a.memory().identify());
    }

    /** The event type of an Asynchronous Event completion's dword 0 (bits 2:0). */
    public static int aenType(int dw0) {
        return dw0 & 0x7;
    }

    /** The event information of an Asynchronous Event completion's dword 0 (bits 15:8). */
    public static int aenInfo(int dw0) {
        return (dw0 >>> 8) & 0xFF;
    }

    /** The log page to read for an Asynchronous Event completion's dword 0 (bits 23:16). */
    public static int aenLogPage(int dw0) {
        return (dw0 >>> 16) & 0xFF;
    }

    /** Dword 0 of an Asynchronous Event completion (targets, tests). */
    public static int aenDw0(int type, int info, int logPage) {
        return (type & 0x7) | (info & 0xFF) << 8 | (logPage & 0xFF) << 16;
    }

    /**
     * Identify with CNS {@code cns} for {@code nsid}; the 4096-byte data structure lands in the queue memory's
     * Identify area ({@link QueueMemory#identify()}).
     *
     * @throws NvmfStatusException when the controller answers an error status
     */
    public static void identify(QueueConnection a, int nsid, int cns, long timeoutNs) {
        QueueConnection.Completion r = a.execSync(sqe -> {
            SqeDescriptor.clear(sqe);
            SqeDescriptor.opcode(sqe, Opcodes.ADMIN_IDENTIFY);
            SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
            SqeDescriptor.nsid(sqe, nsid);
            SqeDescriptor.cdw(sqe, 10, cns);
            SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), a.memory().mr().address() + a.memory().identifyOffset(),
                    QueueMemory.IDENTIFY_BYTES, a.memory().mr().rkey());
        }, timeoutNs);
        if (r.status() != NvmeStatus.SUCCESS) {
            throw NvmfStatusException.of("Identify failed: cns=" + cns + ", nsid=" + nsid, r.status());
        }
    }

    /**
     * Property Get CAP, then CC.EN=1 and wait for CSTS.RDY within CAP.TO ({@code fallbackReadyNs} when TO is 0):
     * the controller-enable step of every new association. Returns CAP.
     *
     * @throws NvmfStatusException as {@link #readCap} and {@link #enable}
     * @throws NvmfHostException   as {@link #enable}
     */
    public static long readCapAndEnable(QueueConnection a, long timeoutNs, long fallbackReadyNs) {
        long cap = readCap(a, timeoutNs);
        enable(a, timeoutNs, TargetLimits.readyTimeoutNs(cap, fallbackReadyNs));
        return cap;
    }

    /**
     * Identify Controller (CNS 01h) into the Identify area, decoded; the raw 4096 bytes stay in
     * {@link QueueMemory#identify()} for {@link TargetLimits#of}.
     *
     * @throws NvmfStatusException when the controller answers an error status
     */
    public static IdentifyControllerDescriptor.Info identifyController(QueueConnection a, long timeoutNs) {
        identify(a, 0, Opcodes.CNS_CONTROLLER, timeoutNs);
        return IdentifyControllerDescriptor.decode(a.memory().identify());
    }

    /** One Keep Alive, waited for at most {@code timeoutNs}; returns its completion (status 0 = success). */
    public static QueueConnection.Completion keepAlive(QueueConnection a, long timeoutNs) {
        return a.execSync(sqe -> {
            noData(sqe, Opcodes.ADMIN_KEEP_ALIVE);
        }, timeoutNs);
    }

    /**
     * One peer lease renewal ({@link Opcodes#ADMIN_PEER_LEASE}: NSID 1, CDW10-11 = {@code epoch}, CDW12 =
     * {@code leaseMs}), waited for at most {@code timeoutNs}; DW0 of the completion is the lease granted, ms.
     */
    public static QueueConnection.Completion peerLease(QueueConnection a, long epoch, long leaseMs, long timeoutNs) {
        return a.execSync(sqe -> {
            noData(sqe, Opcodes.ADMIN_PEER_LEASE);
            SqeDescriptor.nsid(sqe, 1);
            SqeDescriptor.cdw(sqe, 10, (int) epoch);
            SqeDescriptor.cdw(sqe, 11, (int) (epoch >>> 32));
            SqeDescriptor.cdw(sqe, 12, (int) leaseMs);
        }, timeoutNs);
    }

    /**
     * One copy snapshot command ({@link Opcodes#ADMIN_COPY_SNAPSHOT}: NSID 1, CDW10-11 = {@code epoch}, CDW12-13 =
     * {@code snapshotId}, CDW14 = {@code action}), waited for at most {@code timeoutNs}.
     */
    public static QueueConnection.Completion copySnapshot(QueueConnection a, long epoch, long snapshotId, int action,
                                                          long timeoutNs) {
        return a.execSync(sqe -> {
            noData(sqe, Opcodes.ADMIN_COPY_SNAPSHOT);
            SqeDescriptor.nsid(sqe, 1);
            SqeDescriptor.cdw(sqe, 10, (int) epoch);
            SqeDescriptor.cdw(sqe, 11, (int) (epoch >>> 32));
            SqeDescriptor.cdw(sqe, 12, (int) snapshotId);
            SqeDescriptor.cdw(sqe, 13, (int) (snapshotId >>> 32));
            SqeDescriptor.cdw(sqe, 14, action);
        }, timeoutNs);
    }

    /**
     * Posts the one Asynchronous Event Request (cid {@link QueueConnection#AER_CID}, capsule slot 1) without
     * waiting: it completes when the controller has an event (a namespace attribute change after a resize).
     */
    public static void postAsyncEventRequest(QueueConnection a) {
        MemorySegment sqe = a.memory().capsule(1);
        noData(sqe, Opcodes.ADMIN_ASYNC_EVENT_REQUEST);
        SqeDescriptor.cid(sqe, QueueConnection.AER_CID);
        SendWr wr = new SendWr(1);
        wr.wrId = QueueConnection.SEND_TAG | 1;
        wr.opcode = WrOpcode.SEND;
        wr.sendFlags = SendWr.SIGNALED;
        wr.sgList[0].set(a.memory().mr(), a.memory().capsuleOffset(1), SqeDescriptor.LENGTH);
        wr.numSge = 1;
        a.qp().postSend(wr);
    }

    /**
     * Clears the SQE and writes opcode, PSDT=01b (SGL) and the null descriptor every command without data carries:
     * a Keyed SGL Data Block (40h) with address 0, length 0, key 0, as Linux {@code nvme_rdma_set_sg_null}. Linux
     * nvmet refuses an all-zero SGL1 (type 0, subtype 0: "invalid SGL subtype", Invalid Field in Command;
     * {@code nvmet_rdma_map_sgl}).
     *
     * @param sqe at least 64 bytes
     */
    public static void noData(MemorySegment sqe, int opcode) {
        SqeDescriptor.clear(sqe);
        SqeDescriptor.opcode(sqe, opcode);
        SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
        SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), 0, 0, 0);
    }

    /** A Fabrics command (opcode 7Fh, FCTYPE in byte 4) without data. */
    private static void fabrics(MemorySegment sqe, int fctype) {
        noData(sqe, Opcodes.FABRICS);
        SqeDescriptor.fctype(sqe, fctype);
    }

    private static void check(QueueConnection.Completion r, String what) {
        if (r.status() != NvmeStatus.SUCCESS) {
            throw NvmfStatusException.of(what + " failed", r.status());
        }
    }
}
