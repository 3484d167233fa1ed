package io.rdmablock.rdma.fabric;

/**
 * NVMe status values as a 15-bit int: {@code DNR << 14 | SCT << 8 | SC} — the CQE status field shifted right by one
 * (no phase tag), with CRD and More zero (NVMe Base 2.0 section 4.6.1, Figure 92). {@code 0} is success.
 *
 * <p>Status codes: generic (SCT 0) Figure 101; command specific (SCT 1) Figure 102 and NVMe-oF 1.1 Figure 21
 * (Connect); media and data integrity errors (SCT 2) Figure 103; NVM Command Set 1.0 Figure 22 (LBA out of range).
 */
public final class NvmeStatus {
    public static final int SUCCESS = 0;

    public static final int SCT_GENERIC = 0;
    public static final int SCT_COMMAND_SPECIFIC = 1;
    public static final int SCT_MEDIA = 2;

    // Generic command status (SCT 0)
    public static final int SC_INVALID_OPCODE = 0x01;
    public static final int SC_INVALID_FIELD = 0x02;
    public static final int SC_CID_CONFLICT = 0x03;
    public static final int SC_DATA_TRANSFER_ERROR = 0x04;
    public static final int SC_INTERNAL_ERROR = 0x06;
    public static final int SC_ABORT_REQUESTED = 0x07;
    public static final int SC_ABORTED_SQ_DELETION = 0x08;
    public static final int SC_INVALID_NAMESPACE = 0x0B;
    public static final int SC_COMMAND_SEQUENCE_ERROR = 0x0C;
    public static final int SC_INVALID_SGL_SEGMENT_DESCRIPTOR = 0x0D;
    public static final int SC_INVALID_NUMBER_OF_SGL_DESCRIPTORS = 0x0E;
    public static final int SC_DATA_SGL_LENGTH_INVALID = 0x0F;
    public static final int SC_SGL_DESCRIPTOR_TYPE_INVALID = 0x11;
    public static final int SC_SGL_OFFSET_INVALID = 0x16;
    public static final int SC_LBA_OUT_OF_RANGE = 0x80;
    public static final int SC_CAPACITY_EXCEEDED = 0x81;
    public static final int SC_NAMESPACE_NOT_READY = 0x82;
    /**
     * Generic 83h Reservation Conflict (NVMe Base 2.0 Figure 102). rdmablock also answers it to a forwarded write whose
     * epoch is below the highest the secondary accepted (docs/replication.md, "Wire").
     */
    public static final int SC_RESERVATION_CONFLICT = 0x83;

    // Command specific (SCT 1)
    public static final int SC_INVALID_QUEUE_IDENTIFIER = 0x01;
    public static final int SC_INVALID_QUEUE_SIZE = 0x02;
    /** Fabrics Connect: Connect Invalid Parameters (dw0 carries IATTR/IPO of the offending field). */
    public static final int SC_CONNECT_INVALID_PARAMETERS = 0x82;
    /** Fabrics Connect: Connect Invalid Host (hostnqn not allowed for the subsystem). */
    public static final int SC_CONNECT_INVALID_HOST = 0x84;
    public static final int SC_CONNECT_CONTROLLER_BUSY = 0x81;
    /** Fabrics: Authentication Required (NVMe Base 2.0 Figure 102): a command before in-band authentication completed. */
    public static final int SC_AUTHENTICATION_REQUIRED = 0x91;

    // Media and data integrity (SCT 2)
    public static final int SC_WRITE_FAULT = 0x80;
    public static final int SC_UNRECOVERED_READ_ERROR = 0x81;

    private NvmeStatus() {
    }

    /** Builds a status value. */
    public static int of(int sct, int sc, boolean dnr) {
        return (dnr ? 1 << 14 : 0) | (sct & 0x7) << 8 | (sc & 0xFF);
    }

    /** Generic status with DNR set (the usual answer to a malformed command). */
    public static int generic(int sc) {
        return of(SCT_GENERIC, sc, true);
    }

    /** Command-specific status with DNR set. */
    public static int commandSpecific(int sc) {
        return of(SCT_COMMAND_SPECIFIC, sc, true);
    }

    public static int sct(int status) {
        return (status >>> 8) & 0x7;
    }

    public static int sc(int status) {
        return status & 0xFF;
    }

    public static boolean dnr(int status) {
        return (status & (1 << 14)) != 0;
    }

    /** "sct=0x0 sc=0x80 (LBA out of range) dnr=true". */
    public static String describe(int status) {
        return String.format("sct=0x%x sc=0x%02x (%s) dnr=%s", sct(status), sc(status), name(status), dnr(status));
    }

    /** Short name of a status. */
    public static String name(int status) {
        int sct = sct(status);
        int sc = sc(status);
        if (status == 0) {
            return "success";
        }
        if (sct == SCT_GENERIC) {
            return switch (sc) {
                case SC_INVALID_OPCODE -> "invalid command opcode";
                case SC_INVALID_FIELD -> "invalid field in command";
                case SC_CID_CONFLICT -> "command id conflict";
                case SC_DATA_TRANSFER_ERROR -> "data transfer error";
                case SC_INTERNAL_ERROR -> "internal error";
                case SC_ABORT_REQUESTED -> "command abort requested";
                case SC_ABORTED_SQ_DELETION -> "command aborted due to SQ deletion";
                case SC_INVALID_NAMESPACE -> "invalid namespace or format";
                case SC_COMMAND_SEQUENCE_ERROR -> "command sequence error";
                case SC_INVALID_SGL_SEGMENT_DESCRIPTOR -> "invalid SGL segment descriptor";
                case SC_INVALID_NUMBER_OF_SGL_DESCRIPTORS -> "invalid number of SGL descriptors";
                case SC_DATA_SGL_LENGTH_INVALID -> "data SGL length invalid";
                case SC_SGL_DESCRIPTOR_TYPE_INVALID -> "SGL descriptor type invalid";
                case SC_SGL_OFFSET_INVALID -> "SGL offset invalid";
                case SC_LBA_OUT_OF_RANGE -> "LBA out of range";
                case SC_CAPACITY_EXCEEDED -> "capacity exceeded";
                case SC_NAMESPACE_NOT_READY -> "namespace not ready";
                case SC_RESERVATION_CONFLICT -> "reservation conflict";
                default -> "generic status";
            };
        }
        if (sct == SCT_COMMAND_SPECIFIC) {
            return switch (sc) {
                case SC_INVALID_QUEUE_IDENTIFIER -> "invalid queue identifier";
                case SC_INVALID_QUEUE_SIZE -> "invalid queue size";
                case SC_CONNECT_CONTROLLER_BUSY -> "connect controller busy";
                case SC_CONNECT_INVALID_PARAMETERS -> "connect invalid parameters";
                case SC_CONNECT_INVALID_HOST -> "connect invalid host";
                default -> "command specific status";
            };
        }
        if (sct == SCT_MEDIA) {
            return switch (sc) {
                case SC_WRITE_FAULT -> "write fault";
                case SC_UNRECOVERED_READ_ERROR -> "unrecovered read error";
                default -> "media error";
            };
        }
        if (sct == 3) { // Path Related Status (NVMe 1.4 Figure 130)
            return switch (sc) {
                case 0x00 -> "internal path error";
                case 0x01 -> "asymmetric access persistent loss";
                case 0x02 -> "asymmetric access inaccessible";
                case 0x03 -> "asymmetric access transition";
                default -> "path related status";
            };
        }
        return "status sct=0x" + Integer.toHexString(sct) + " sc=0x" + Integer.toHexString(sc);
    }
}
