package io.rdmablock.rdma.fabric.auth;

import io.rdmablock.nvme.auth.DhchapHash;

import java.util.List;

/**
 * The byte layouts of the in-band authentication messages carried as the data of Authentication Send (FCTYPE 05h,
 * host to controller) and Authentication Receive (FCTYPE 06h, controller to host) with SECP E9h, SPSP0 01h, SPSP1 01h
 * (NVMe Base 2.0 sections 6.1, 6.2, 8.13.5.2-8.13.5.7; Linux {@code include/linux/nvme.h}
 * {@code struct nvmf_auth_dhchap_*_data}). Little-endian; offsets in bytes from the start of the message.
 *
 * <pre>
 * every message:      0 AUTH_TYPE (00h common, 01h DH-HMAC-CHAP)  1 AUTH_ID  2-3 reserved  4-5 T_ID
 *
 * AUTH_Negotiate      (00h/00h), 8 + 64 x NAPD bytes (rdmablock sends and accepts NAPD = 1: 72 bytes)
 *   6 SC_C (00h: no secure channel)  7 NAPD
 *   8 protocol descriptor: 8 AUTHID (01h DH-HMAC-CHAP)  9 reserved  10 HALEN  11 DHLEN
 *                          12 .. 12+HALEN hash ids ({@link DhchapHash#id}), 42 .. 42+DHLEN DH group ids (idlist[30..])
 * DH-HMAC-CHAP_Challenge (01h/01h), 16 + HL + DHVLEN bytes
 *   6 HL  7 reserved  8 HASHID  9 DHGID  10-11 DHVLEN  12-15 SEQNUM (S1)  16 C1 (HL bytes)  16+HL DH value g^x
 * DH-HMAC-CHAP_Reply (01h/02h), 16 + 2 HL + DHVLEN bytes
 *   6 HL  7 reserved  8 CVALID (1: C2 present)  9 reserved  10-11 DHVLEN  12-15 SEQNUM (S2, 0: unidirectional)
 *   16 R1 (HL bytes)  16+HL C2 (HL bytes, zero when CVALID 0)  16+2HL DH value g^y
 * DH-HMAC-CHAP_Success1 (01h/03h), 16 bytes, + HL when RVALID
 *   6 HL  7 reserved  8 RVALID (1: R2 present)  9-15 reserved  16 R2 (HL bytes)
 * DH-HMAC-CHAP_Success2 (01h/04h), 16 bytes: 6-15 reserved
 * AUTH_Failure1 (00h/F1h, controller to host) / AUTH_Failure2 (00h/F0h, host to controller), 8 bytes
 *   6 REASON CODE (01h: authentication failure)  7 REASON CODE EXPLANATION ({@link #FAILED} .. {@link #INCORRECT_MESSAGE})
 * </pre>
 *
 * Authentication Send / Receive SQE (Linux {@code struct nvmf_auth_send_command}): byte 4 FCTYPE, 24-39 SGL1, 41 SPSP0,
 * 42 SPSP1, 43 SECP, 44-47 TL (Send: transfer length) or AL (Receive: allocation length), in bytes.
 */
public final class DhchapMessages {
    /** SECP of DH-HMAC-CHAP (Authentication Send / Receive byte 43). */
    public static final int SECP = 0xE9;
    /** SPSP0 and SPSP1 (bytes 41, 42). */
    public static final int SPSP = 0x01;
    public static final int SPSP0_OFFSET = 41;
    public static final int SPSP1_OFFSET = 42;
    public static final int SECP_OFFSET = 43;
    /** TL (Send) / AL (Receive), bytes 44-47. */
    public static final int LENGTH_OFFSET = 44;
    /** Longest message rdmablock sends or accepts: Linux's CHAP_BUF_SIZE, enough for ffdhe8192 with SHA-512. */
    public static final int MAX_LENGTH = 4096;

    public static final int TYPE_COMMON = 0x00;
    public static final int TYPE_DHCHAP = 0x01;
    public static final int ID_NEGOTIATE = 0x00;
    public static final int ID_CHALLENGE = 0x01;
    public static final int ID_REPLY = 0x02;
    public static final int ID_SUCCESS1 = 0x03;
    public static final int ID_SUCCESS2 = 0x04;
    public static final int ID_FAILURE2 = 0xF0;
    public static final int ID_FAILURE1 = 0xF1;
    /** AUTHID of the DH-HMAC-CHAP protocol descriptor. */
    public static final int AUTHID_DHCHAP = 0x01;
    /** REASON CODE: authentication failure. */
    public static final int REASON_FAILURE = 0x01;

    // Reason code explanations (NVMe Base 2.0 Figure 455; Linux NVME_AUTH_DHCHAP_FAILURE_*)
    public static final int FAILED = 0x01;
    public static final int PROTOCOL_NOT_USABLE = 0x02;
    public static final int CONCAT_MISMATCH = 0x03;
    public static final int HASH_UNUSABLE = 0x04;
    public static final int DHGROUP_UNUSABLE = 0x05;
    public static final int INCORRECT_PAYLOAD = 0x06;
    public static final int INCORRECT_MESSAGE = 0x07;

    public static final int HEADER_LENGTH = 16;
    public static final int NEGOTIATE_LENGTH = 8 + 64;
    public static final int FAILURE_LENGTH = 8;
    static final int TID_OFFSET = 4;
    static final int HL_OFFSET = 6;
    static final int SC_C_OFFSET = 6;
    static final int NAPD_OFFSET = 7;
    static final int AUTHID_OFFSET = 8;
    static final int HALEN_OFFSET = 10;
    static final int DHLEN_OFFSET = 11;
    static final int HASH_IDS_OFFSET = 12;
    static final int DH_IDS_OFFSET = 12 + 30;
    static final int HASHID_OFFSET = 8;
    static final int DHGID_OFFSET = 9;
    static final int VALID_OFFSET = 8;
    static final int DHVLEN_OFFSET = 10;
    static final int SEQNUM_OFFSET = 12;
    static final int REASON_OFFSET = 6;
    static final int EXPLANATION_OFFSET = 7;

    private DhchapMessages() {
    }

    /** Name of a reason code explanation, for logs and errors. */
    public static String explanation(int code) {
        return switch (code) {
            case FAILED -> "01h authentication failed";
            case PROTOCOL_NOT_USABLE -> "02h authentication protocol not usable";
            case CONCAT_MISMATCH -> "03h secure channel concatenation mismatch";
            case HASH_UNUSABLE -> "04h hash function not usable";
            case DHGROUP_UNUSABLE -> "05h DH group not usable";
            case INCORRECT_PAYLOAD -> "06h incorrect payload";
            case INCORRECT_MESSAGE -> "07h incorrect protocol message";
            default -> String.format("%02xh (unknown)", code);
        };
    }

    static byte[] negotiate(int tid, List<DhchapHash> hashes, List<DhGroup> groups) {
        byte[] m = header(NEGOTIATE_LENGTH, TYPE_COMMON, ID_NEGOTIATE, tid);
        m[NAPD_OFFSET] = 1;
        m[AUTHID_OFFSET] = AUTHID_DHCHAP;
        m[HALEN_OFFSET] = (byte) hashes.size();
        m[DHLEN_OFFSET] = (byte) groups.size();
        for (int i = 0; i < hashes.size(); i++) {
            m[HASH_IDS_OFFSET + i] = (byte) hashes.get(i).id;
        }
        for (int i = 0; i < groups.size(); i++) {
            m[DH_IDS_OFFSET + i] = (byte) groups.get(i).id;
        }
        return m;
    }

    static byte[] challenge(int tid, DhchapHash h, DhGroup g, int seqnum, byte[] c1, byte[] dhValue) {
        int dhv = dhValue == null ? 0 : dhValue.length;
        byte[] m = header(HEADER_LENGTH + h.lengthBytes + dhv, TYPE_DHCHAP, ID_CHALLENGE, tid);
        m[HL_OFFSET] = (byte) h.lengthBytes;
        m[HASHID_OFFSET] = (byte) h.id;
        m[DHGID_OFFSET] = (byte) g.id;
        u16(m, DHVLEN_OFFSET, dhv);
        u32(m, SEQNUM_OFFSET, seqnum);
        System.arraycopy(c1, 0, m, HEADER_LENGTH, h.lengthBytes);
        if (dhv > 0) {
            System.arraycopy(dhValue, 0, m, HEADER_LENGTH + h.lengthBytes, dhv);
        }
        return m;
    }

    static byte[] reply(int tid, int hl, byte[] r1, byte[] c2, int seqnum, byte[] dhValue) {
        int dhv = dhValue == null ? 0 : dhValue.length;
        byte[] m = header(HEADER_LENGTH + 2 * hl + dhv, TYPE_DHCHAP, ID_REPLY, tid);
        m[HL_OFFSET] = (byte) hl;
        m[VALID_OFFSET] = (byte) (c2 == null ? 0 : 1);
        u16(m, DHVLEN_OFFSET, dhv);
        u32(m, SEQNUM_OFFSET, seqnum);
        System.arraycopy(r1, 0, m, HEADER_LENGTH, hl);
        if (c2 != null) {
            System.arraycopy(c2, 0, m, HEADER_LENGTH + hl, hl);
        }
        if (dhv > 0) {
            System.arraycopy(dhValue, 0, m, HEADER_LENGTH + 2 * hl, dhv);
        }
        return m;
    }

    static byte[] success1(int tid, int hl, byte[] r2) {
        byte[] m = header(HEADER_LENGTH + (r2 == null ? 0 : hl), TYPE_DHCHAP, ID_SUCCESS1, tid);
        m[HL_OFFSET] = (byte) hl;
        if (r2 != null) {
            m[VALID_OFFSET] = 1;
            System.arraycopy(r2, 0, m, HEADER_LENGTH, hl);
        }
        return m;
    }

    static byte[] success2(int tid) {
        return header(HEADER_LENGTH, TYPE_DHCHAP, ID_SUCCESS2, tid);
    }

    /** AUTH_Failure1 ({@link #ID_FAILURE1}) or AUTH_Failure2 ({@link #ID_FAILURE2}). */
    static byte[] failure(int id, int tid, int explanation) {
        byte[] m = header(FAILURE_LENGTH, TYPE_COMMON, id, tid);
        m[REASON_OFFSET] = REASON_FAILURE;
        m[EXPLANATION_OFFSET] = (byte) explanation;
        return m;
    }

    private static byte[] header(int length, int type, int id, int tid) {
        byte[] m = new byte[length];
        m[0] = (byte) type;
        m[1] = (byte) id;
        u16(m, TID_OFFSET, tid);
        return m;
    }

    /** AUTH_TYPE of a message (byte 0), -1 when it is shorter than 6 bytes. */
    public static int type(byte[] m) {
        return m.length < 6 ? -1 : m[0] & 0xFF;
    }

    /** AUTH_ID of a message (byte 1), -1 when it is shorter than 6 bytes. */
    public static int id(byte[] m) {
        return m.length < 6 ? -1 : m[1] & 0xFF;
    }

    /** T_ID of a message (bytes 4-5), -1 when it is shorter than 6 bytes. */
    public static int tid(byte[] m) {
        return m.length < 6 ? -1 : u16(m, TID_OFFSET);
    }

    static int u8(byte[] m, int off) {
        return m[off] & 0xFF;
    }

    static int u16(byte[] m, int off) {
        return (m[off] & 0xFF) | (m[off + 1] & 0xFF) << 8;
    }

    static int u32(byte[] m, int off) {
        return u16(m, off) | u16(m, off + 2) << 16;
    }

    static void u16(byte[] m, int off, int v) {
        m[off] = (byte) v;
        m[off + 1] = (byte) (v >>> 8);
    }

    static void u32(byte[] m, int off, int v) {
        u16(m, off, v);
        u16(m, off + 2, v >>> 16);
    }

    static byte[] slice(byte[] m, int off, int len) {
        return java.util.Arrays.copyOfRange(m, off, off + len);
    }
}
