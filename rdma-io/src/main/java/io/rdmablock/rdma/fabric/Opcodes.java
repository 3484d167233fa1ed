package io.rdmablock.rdma.fabric;

/**
 * Command opcodes used by rdmablock (NVMe Base 2.0 Figure 138 admin opcodes; NVM Command Set 1.0 Figure 17 I/O
 * opcodes; NVMe-oF 1.1 Figure 8 fabrics command types).
 */
public final class Opcodes {
    // Admin (qid 0)
    public static final int ADMIN_GET_LOG_PAGE = 0x02;
    public static final int ADMIN_IDENTIFY = 0x06;
    public static final int ADMIN_SET_FEATURES = 0x09;
    public static final int ADMIN_GET_FEATURES = 0x0A;
    public static final int ADMIN_ASYNC_EVENT_REQUEST = 0x0C;
    public static final int ADMIN_KEEP_ALIVE = 0x18;
    /**
     * rdmablock's peer lease renewal, a vendor specific admin command (NVMe Base 2.0 Figure 138: C0h..FFh), sent only
     * by a primary node to its secondaries (docs/failover.md, "Peer lease"): NSID 1, CDW10 = epoch bits 31:0, CDW11 =
     * epoch bits 63:32, CDW12 = lease asked for, ms (1..60000); no data. The CQE's DW0 is the lease granted, ms (0 =
     * refused: not a secondary at that epoch, or no grants allowed).
     */
    public static final int ADMIN_PEER_LEASE = 0xC1;
    /**
     * rdmablock's copy snapshot, a vendor specific admin command (NVMe Base 2.0 Figure 138: C0h..FFh; bits 1:0 = 00b,
     * no data), sent only by a primary node to its in-sync secondaries while it holds every write of the volume
     * (docs/snapshots.md, "Replicated volumes"; docs/wire-protocol.md section 7.3): NSID 1, CDW10 = epoch bits 31:0,
     * CDW11 = epoch bits 63:32, CDW12 = snapshot id bits 31:0, CDW13 = snapshot id bits 63:32, CDW14 = action
     * ({@link #COPY_SNAPSHOT_TAKE} or {@link #COPY_SNAPSHOT_DELETE}). Answered once the copy's store did it.
     */
    public static final int ADMIN_COPY_SNAPSHOT = 0xC4;
    /** CDW14 of {@link #ADMIN_COPY_SNAPSHOT}: take the snapshot now (replacing one of the same id). */
    public static final int COPY_SNAPSHOT_TAKE = 0;
    /** CDW14 of {@link #ADMIN_COPY_SNAPSHOT}: delete the snapshot (success when the copy holds none of that id). */
    public static final int COPY_SNAPSHOT_DELETE = 1;

    // NVM I/O (qid >= 1)
    public static final int IO_FLUSH = 0x00;
    public static final int IO_WRITE = 0x01;
    public static final int IO_READ = 0x02;
    public static final int IO_WRITE_ZEROES = 0x08;
    public static final int IO_DATASET_MANAGEMENT = 0x09;
    /**
     * rdmablock's read snapshot, a vendor specific NVM I/O command (NVM Command Set 1.0 Figure 17: 80h..FFh; bits
     * 1:0 = 10b, controller-to-host data) on a volume's own I/O queues (docs/wire-protocol.md section 7.2): fields as
     * {@link #IO_READ} (CDW10-11 SLBA, CDW12 bits 15:0 NLB 0-based, a keyed SGL) plus CDW14 = snapshot id bits 31:0,
     * CDW15 = snapshot id bits 63:32 (the management plane's id, &gt;= 1). Reads the snapshot's image, never writes.
     */
    public static final int IO_READ_SNAPSHOT = 0x82;

    /** Fabrics command opcode (any queue); the command type is FCTYPE at SQE byte 4. */
    public static final int FABRICS = 0x7F;
    public static final int FCTYPE_PROPERTY_SET = 0x00;
    public static final int FCTYPE_CONNECT = 0x01;
    public static final int FCTYPE_PROPERTY_GET = 0x04;
    /** Authentication Send (NVMe Base 2.0 section 6.2): host-to-controller authentication message. */
    public static final int FCTYPE_AUTH_SEND = 0x05;
    /** Authentication Receive (NVMe Base 2.0 section 6.1): controller-to-host authentication message. */
    public static final int FCTYPE_AUTH_RECEIVE = 0x06;

    /** Identify CNS values (cdw10 7:0). */
    public static final int CNS_NAMESPACE = 0x00;
    public static final int CNS_CONTROLLER = 0x01;
    public static final int CNS_ACTIVE_NAMESPACE_LIST = 0x02;
    /** Namespace Identification Descriptor list (NVMe Base 2.0 section 5.17.2.3). */
    public static final int CNS_NAMESPACE_ID_DESCRIPTORS = 0x03;
    /** I/O Command Set specific Identify Controller; CSI in cdw11 bits 31:24 (NVM Command Set 1.0 section 4.1.5.3). */
    public static final int CNS_CS_CONTROLLER = 0x06;

    /** Feature identifiers (NVMe Base 2.0 Figure 317). */
    public static final int FID_VOLATILE_WRITE_CACHE = 0x06;
    public static final int FID_NUMBER_OF_QUEUES = 0x07;
    public static final int FID_ASYNC_EVENT_CONFIG = 0x0B;
    public static final int FID_KEEP_ALIVE_TIMER = 0x0F;

    /** Identify data length: 4096 bytes for every CNS. */
    public static final int IDENTIFY_DATA_LENGTH = 4096;

    /** Property offsets (NVMe Base 2.0 section 3.1.3, Figure 35) and their sizes. */
    public static final int PROP_CAP = 0x00; // 8 bytes
    public static final int PROP_VS = 0x08; // 4 bytes
    public static final int PROP_CC = 0x14; // 4 bytes
    public static final int PROP_CSTS = 0x1C; // 4 bytes

    private Opcodes() {
    }

    /** Human-readable name for logs and metrics labels. */
    public static String ioName(int opcode) {
        return switch (opcode) {
            case IO_FLUSH -> "flush";
            case IO_WRITE -> "write";
            case IO_READ -> "read";
            case IO_WRITE_ZEROES -> "write_zeroes";
            case IO_DATASET_MANAGEMENT -> "dsm";
            case IO_READ_SNAPSHOT -> "read_snapshot";
            case FABRICS -> "fabrics";
            default -> "op_0x" + Integer.toHexString(opcode);
        };
    }
}
