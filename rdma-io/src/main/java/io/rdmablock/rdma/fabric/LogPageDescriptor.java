package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;

/**
 * Get Log Page command fields (NVMe Base 2.0 section 5.16, Figures 195-198) and the layouts of the small log pages
 * rdmablock serves: Error Information (5.16.1.2, 64 bytes per entry), SMART / Health Information (5.16.1.3, Figure
 * 207, 512 bytes), Changed Namespace List (5.16.1.5, 4096 bytes: up to 1024 nsids of 4 bytes, then zeros). The
 * Discovery log page is {@link DiscoveryLogDescriptor}.
 *
 * <pre>
 * SQE: cdw10 bits 7:0 LID, 14:8 LSP, 15 RAE (retain asynchronous event), 31:16 NUMDL
 *      cdw11 bits 15:0 NUMDU, 31:16 LSI; cdw12 LPOL, cdw13 LPOU (offset in bytes, dword aligned); cdw14 31:24 CSI
 *      data length = (NUMDU:NUMDL + 1) x 4 bytes
 * SMART: 0 critical warning(1) 1 composite temperature(2, kelvin) 3 available spare(1, %) 4 spare threshold(1, %)
 *        5 percentage used(1) 32 data units read(16: 1000 x 512 bytes, rounded up) 48 data units written(16)
 *        64 host read commands(16) 80 host write commands(16) ...
 * </pre>
 */
public final class LogPageDescriptor {
    public static final int LID_ERROR_INFORMATION = 0x01;
    public static final int LID_SMART_HEALTH = 0x02;
    public static final int LID_CHANGED_NAMESPACE_LIST = 0x04;
    public static final int LID_DISCOVERY = 0x70;

    public static final int ERROR_ENTRY_LENGTH = 64;
    public static final int SMART_LENGTH = 512;
    public static final int CHANGED_NAMESPACE_LIST_LENGTH = 4096;

    public static final int SMART_COMPOSITE_TEMPERATURE = 1;
    public static final int SMART_AVAILABLE_SPARE = 3;
    public static final int SMART_AVAILABLE_SPARE_THRESHOLD = 4;
    public static final int SMART_DATA_UNITS_READ = 32;
    public static final int SMART_DATA_UNITS_WRITTEN = 48;
    public static final int SMART_HOST_READ_COMMANDS = 64;
    public static final int SMART_HOST_WRITE_COMMANDS = 80;
    /** One SMART data unit: 1000 x 512 bytes. */
    public static final long SMART_DATA_UNIT_BYTES = 512_000;

    private LogPageDescriptor() {
    }

    public static int lid(MemorySegment sqe) {
        return SqeDescriptor.cdw(sqe, 10) & 0xFF;
    }

    public static int lsp(MemorySegment sqe) {
        return (SqeDescriptor.cdw(sqe, 10) >>> 8) & 0x7F;
    }

    /** RAE (cdw10 bit 15): retain the asynchronous event (do not clear it by this read). */
    public static boolean rae(MemorySegment sqe) {
        return (SqeDescriptor.cdw(sqe, 10) & (1 << 15)) != 0;
    }

    /** Data length in bytes: (NUMD + 1) x 4, NUMD = NUMDU (cdw11 15:0) : NUMDL (cdw10 31:16); 4 .. 2^34. */
    public static long lengthBytes(MemorySegment sqe) {
        long numdl = SqeDescriptor.cdw(sqe, 10) >>> 16;
        long numdu = SqeDescriptor.cdw(sqe, 11) & 0xFFFF;
        return ((numdu << 16 | numdl) + 1) * 4;
    }

    /** Log page offset in bytes: LPOU (cdw13) : LPOL (cdw12), unsigned. */
    public static long offsetBytes(MemorySegment sqe) {
        return Integer.toUnsignedLong(SqeDescriptor.cdw(sqe, 13)) << 32
                | Integer.toUnsignedLong(SqeDescriptor.cdw(sqe, 12));
    }

    public static int csi(MemorySegment sqe) {
        return SqeDescriptor.cdw(sqe, 14) >>> 24;
    }

    /** Fills the Get Log Page SQE fields (opcode, flags PSDT = SGL, cid, nsid, LID, RAE, length, offset). */
    public static void sqe(MemorySegment sqe, int cid, int nsid, int lid, boolean rae, int lengthBytes,
                           long offsetBytes) {
        if (lengthBytes < 4 || lengthBytes % 4 != 0) {
            throw new IllegalArgumentException("invalid log page length: lengthBytes=" + lengthBytes
                    + ", must be a positive multiple of 4");
        }
        SqeDescriptor.clear(sqe);
        SqeDescriptor.opcode(sqe, Opcodes.ADMIN_GET_LOG_PAGE);
        SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.cid(sqe, cid);
        SqeDescriptor.nsid(sqe, nsid);
        int numd = lengthBytes / 4 - 1;
        SqeDescriptor.cdw(sqe, 10, lid | (rae ? 1 << 15 : 0) | (numd & 0xFFFF) << 16);
        SqeDescriptor.cdw(sqe, 11, numd >>> 16);
        SqeDescriptor.cdw(sqe, 12, (int) offsetBytes);
        SqeDescriptor.cdw(sqe, 13, (int) (offsetBytes >>> 32));
    }

    /** A 128-bit SMART counter (low 64 bits; the high 64 are 0). */
    public static void smartCounter(MemorySegment log, int offset, long value) {
        Wire.u64(log, offset, value);
        Wire.u64(log, offset + 8, 0);
    }

    public static long smartCounter(MemorySegment log, int offset) {
        return Wire.u64(log, offset);
    }

    /** SMART data units (1000 x 512 bytes) for {@code bytes}, rounded up. */
    public static long dataUnits(long bytes) {
        return (bytes + SMART_DATA_UNIT_BYTES - 1) / SMART_DATA_UNIT_BYTES;
    }
}
