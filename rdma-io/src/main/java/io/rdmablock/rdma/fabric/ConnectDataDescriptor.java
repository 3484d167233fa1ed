package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;

/**
 * The Fabrics Connect command: SQE fields (NVMe-oF 1.1 section 3.3, Figure 19) and its 1024-byte data (Figure 20).
 *
 * <pre>
 * SQE: opcode 0x7F, byte 4 FCTYPE 0x01, SGL1 -> the 1024-byte data below;
 *      cdw10 bytes 40-41 RECFMT (0), 42-43 QID, 44-45 SQSIZE (0-based), 46 CATTR, 48-51 KATO (ms; admin queue only)
 * Data: 0 HOSTID (16 bytes, UUID) | 16 CNTLID (2; 0xFFFF = dynamic, on the admin queue) | 18..255 reserved
 *       256 SUBNQN (256, NUL-terminated UTF-8) | 512 HOSTNQN (256) | 768..1023 reserved
 * Response dw0 (success): CNTLID in bits 15:0.
 * Response dw0 (Connect Invalid Parameters): IATTR bit 16 (0 = SQE, 1 = data), IPO bits 31:16... (see below)
 * </pre>
 * rdmablock reports the invalid parameter as dw0 = IATTR (bits 7:0 of byte 0: bit 0 = 1 if in data) and IPO
 * (bytes 2-3: byte offset of the field), following NVMe-oF 1.1 Figure 21.
 */
public final class ConnectDataDescriptor {
    public static final int DATA_LENGTH = 1024;
    public static final int RECFMT_OFFSET = 40;
    public static final int QID_OFFSET = 42;
    public static final int SQSIZE_OFFSET = 44;
    public static final int CATTR_OFFSET = 46;
    public static final int KATO_OFFSET = 48;

    public static final int HOSTID_OFFSET = 0;
    public static final int CNTLID_OFFSET = 16;
    public static final int SUBNQN_OFFSET = 256;
    public static final int HOSTNQN_OFFSET = 512;
    public static final int NQN_LENGTH = 256;
    /** CNTLID value asking for a dynamic controller on the admin queue. */
    public static final int CNTLID_DYNAMIC = 0xFFFF;

    private ConnectDataDescriptor() {
    }

    public static int recfmt(MemorySegment sqe) {
        return Wire.u16(sqe, RECFMT_OFFSET);
    }

    public static int qid(MemorySegment sqe) {
        return Wire.u16(sqe, QID_OFFSET);
    }

    /** SQSIZE as on the wire: 0-based (entries - 1). */
    public static int sqsize(MemorySegment sqe) {
        return Wire.u16(sqe, SQSIZE_OFFSET);
    }

    public static int kato(MemorySegment sqe) {
        return Wire.u32(sqe, KATO_OFFSET);
    }

    /** Fills the Connect SQE fields (opcode, FCTYPE, cid, RECFMT 0, qid, sqsize 0-based, kato ms). SGL1 is left to the caller. */
    public static void sqe(MemorySegment sqe, int cid, int qid, int sqsize, int katoMs) {
        SqeDescriptor.clear(sqe);
        SqeDescriptor.opcode(sqe, Opcodes.FABRICS);
        SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.cid(sqe, cid);
        SqeDescriptor.fctype(sqe, Opcodes.FCTYPE_CONNECT);
        Wire.u16(sqe, RECFMT_OFFSET, 0);
        Wire.u16(sqe, QID_OFFSET, qid);
        Wire.u16(sqe, SQSIZE_OFFSET, sqsize);
        Wire.u32(sqe, KATO_OFFSET, katoMs);
    }

    public static int cntlid(MemorySegment data) {
        return Wire.u16(data, CNTLID_OFFSET);
    }

    public static String subnqn(MemorySegment data) {
        return Wire.string(data, SUBNQN_OFFSET, NQN_LENGTH);
    }

    public static String hostnqn(MemorySegment data) {
        return Wire.string(data, HOSTNQN_OFFSET, NQN_LENGTH);
    }

    /**
     * What is wrong with the NQN field at {@code offset} ({@link #SUBNQN_OFFSET} or {@link #HOSTNQN_OFFSET}) of the
     * Connect data, or null when it is well-formed: NUL-terminated within its {@value #NQN_LENGTH} bytes (NVMe-oF 1.1
     * section 3.3, Figure 20), valid UTF-8 (NVMe Base 2.0 section 4.5) and free of control characters (00h..1Fh,
     * 7Fh), so that a Connect's NQNs can reach log lines as they are. The fault text shows the field's first bytes
     * with every byte that is not printable ASCII escaped as {@code \xNN}.
     */
    public static String nqnFault(MemorySegment data, int offset) {
        byte[] b = data.asSlice(offset, NQN_LENGTH).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        if (n == b.length) {
            return "not NUL-terminated within " + NQN_LENGTH + " bytes: " + escaped(b, 64) + "...";
        }
        for (int i = 0; i < n; i++) {
            int c = b[i] & 0xFF;
            if (c < 0x20 || c == 0x7F) {
                return "control character 0x" + Integer.toHexString(c) + " at byte " + i + ": " + escaped(b, n);
            }
        }
        try {
            java.nio.charset.StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(b, 0, n));
        } catch (java.nio.charset.CharacterCodingException e) {
            return "not valid UTF-8: " + escaped(b, n);
        }
        return null;
    }

    /** The first {@code n} (at most 64) bytes of {@code b}, printable ASCII as is, any other byte as \xNN. */
    private static String escaped(byte[] b, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(n, 64); i++) {
            int c = b[i] & 0xFF;
            if (c >= 0x20 && c < 0x7F && c != '\\') {
                sb.append((char) c);
            } else {
                sb.append(String.format("\\x%02x", c));
            }
        }
        return sb.toString();
    }

    /** Fills the 1024-byte Connect data. NQNs longer than 223 bytes (NVMe Base 2.0 section 4.5) are rejected. */
    public static void data(MemorySegment data, byte[] hostId16, int cntlid, String subnqn, String hostnqn) {
        if (subnqn.length() > 223 || hostnqn.length() > 223) {
            throw new IllegalArgumentException("invalid NQN: lengthBytes=" + Math.max(subnqn.length(), hostnqn.length())
                    + ", max=223");
        }
        data.asSlice(0, DATA_LENGTH).fill((byte) 0);
        if (hostId16 != null) {
            for (int i = 0; i < 16 && i < hostId16.length; i++) {
                Wire.u8(data, HOSTID_OFFSET + i, hostId16[i]);
            }
        }
        Wire.u16(data, CNTLID_OFFSET, cntlid);
        Wire.string(data, SUBNQN_OFFSET, NQN_LENGTH, subnqn, "subnqn");
        Wire.string(data, HOSTNQN_OFFSET, NQN_LENGTH, hostnqn, "hostnqn");
    }

    /** dw0 of a Connect Invalid Parameters response: IATTR (1 = field in data) and IPO (byte offset). */
    public static int invalidParameterDw0(boolean inData, int byteOffset) {
        return (inData ? 1 : 0) | (byteOffset & 0xFFFF) << 16;
    }
}
