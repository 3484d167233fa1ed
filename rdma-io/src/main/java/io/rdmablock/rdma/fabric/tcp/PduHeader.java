package io.rdmablock.rdma.fabric.tcp;

import io.rdmablock.rdma.fabric.Wire;
import java.lang.foreign.MemorySegment;

/**
 * The 8-byte common header of every NVMe/TCP PDU (NVMe/TCP Transport Specification 1.0 section 3.3.1; Linux
 * {@code struct nvme_tcp_hdr}), its type and flag values, and the checks a receiver makes before it reads a PDU's
 * data.
 *
 * <pre>
 *  0        1        2        3        4                                   8
 *  +--------+--------+--------+--------+-----------------------------------+
 *  |PDU-TYPE| FLAGS  |  HLEN  |  PDO   |        PLEN (LE, whole PDU)       |
 *  +--------+--------+--------+--------+-----------------------------------+
 *  PDU = header (HLEN) [+ HDGST 4] [+ pad to PDO] [+ data] [+ DDGST 4]; PDO = 0 when there is no data
 * </pre>
 *
 * Receiving a PDU: read the common header, {@link #headerBytes} (type, HLEN, header digest flag: how many bytes make
 * the header and its digest), read them, {@link PduDigest#checkHeaderDigest} when header digests are on, then
 * {@link #dataBytes} (PDO, PLEN and the type's own length field: how many data bytes follow). Every failed check is
 * a {@link PduFormatException} naming the field, its value and the bound, with the FES and FEI the termination PDU
 * reports (section 3.6.2: FEI is the byte offset of the offending field).
 */
public final class PduHeader {
    /** Bytes of the common header. */
    public static final int LENGTH = 8;
    public static final int TYPE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int HLEN_OFFSET = 2;
    public static final int PDO_OFFSET = 3;
    public static final int PLEN_OFFSET = 4;

    /** PDU types (section 3.3, Figure "PDU types"; Linux {@code enum nvme_tcp_pdu_type}). */
    public static final int TYPE_IC_REQ = 0x00;
    public static final int TYPE_IC_RESP = 0x01;
    public static final int TYPE_H2C_TERM_REQ = 0x02;
    public static final int TYPE_C2H_TERM_REQ = 0x03;
    public static final int TYPE_CAPSULE_CMD = 0x04;
    public static final int TYPE_CAPSULE_RESP = 0x05;
    public static final int TYPE_H2C_DATA = 0x06;
    public static final int TYPE_C2H_DATA = 0x07;
    public static final int TYPE_R2T = 0x09;

    /** FLAGS bits (section 3.3.1; Linux {@code enum nvme_tcp_pdu_flags}). */
    public static final int FLAG_HDGST = 1;
    public static final int FLAG_DDGST = 1 << 1;
    /** H2CData/C2HData: last data PDU of the command's transfer (of the R2T for H2CData). */
    public static final int FLAG_LAST_PDU = 1 << 2;
    /** C2HData (with LAST_PDU): the command succeeded, no CapsuleResp follows. */
    public static final int FLAG_SUCCESS = 1 << 3;

    /** Largest header of any PDU type (ICReq/ICResp: 128 bytes). */
    public static final int MAX_HLEN = 128;
    /** Bytes of the data of a termination PDU at most: the offending PDU's header (section 3.6.2: up to 152). */
    public static final int MAX_TERM_DATA = 152;

    private PduHeader() {
    }

    public static int type(MemorySegment pdu) {
        return Wire.u8(pdu, TYPE_OFFSET);
    }

    public static int flags(MemorySegment pdu) {
        return Wire.u8(pdu, FLAGS_OFFSET);
    }

    public static int hlen(MemorySegment pdu) {
        return Wire.u8(pdu, HLEN_OFFSET);
    }

    public static int pdo(MemorySegment pdu) {
        return Wire.u8(pdu, PDO_OFFSET);
    }

    /** PDU length on the wire, header to data digest included (unsigned 32 bits, as a long). */
    public static long plen(MemorySegment pdu) {
        return Integer.toUnsignedLong(Wire.u32(pdu, PLEN_OFFSET));
    }

    /** Writes the common header. */
    public static void set(MemorySegment pdu, int type, int flags, int hlen, int pdo, int plen) {
        Wire.u8(pdu, TYPE_OFFSET, type);
        Wire.u8(pdu, FLAGS_OFFSET, flags);
        Wire.u8(pdu, HLEN_OFFSET, hlen);
        Wire.u8(pdu, PDO_OFFSET, pdo);
        Wire.u32(pdu, PLEN_OFFSET, plen);
    }

    /**
     * HLEN of a PDU type (section 3.3: ICReq/ICResp 128, CapsuleCmd 72, CapsuleResp, H2CData, C2HData, R2T and the
     * termination PDUs 24), or -1 for an unknown type.
     */
    public static int hlenOf(int type) {
        return switch (type) {
            case TYPE_IC_REQ, TYPE_IC_RESP -> IcPdu.LENGTH;
            case TYPE_CAPSULE_CMD -> CapsulePdu.CMD_HLEN;
            case TYPE_CAPSULE_RESP -> CapsulePdu.RESP_HLEN;
            case TYPE_H2C_DATA, TYPE_C2H_DATA, TYPE_R2T -> DataPdu.HLEN;
            case TYPE_H2C_TERM_REQ, TYPE_C2H_TERM_REQ -> TermPdu.HLEN;
            default -> -1;
        };
    }

    /** True for the types a host sends (ICReq, H2CTermReq, CapsuleCmd, H2CData); the others a controller sends. */
    public static boolean fromHost(int type) {
        return type == TYPE_IC_REQ || type == TYPE_H2C_TERM_REQ || type == TYPE_CAPSULE_CMD || type == TYPE_H2C_DATA;
    }

    /**
     * Checks a received common header and gives how many bytes make the PDU header with its digest.
     *
     * @param pdu at least {@link #LENGTH} bytes: the common header
     * @param toController true on the controller (PDUs from a host expected), false on a host
     * @param headerDigest whether header digests were negotiated (ICReq/ICResp and termination PDUs never carry one)
     * @return HLEN plus 4 when the PDU carries a header digest
     * @throws PduFormatException FES {@link TermPdu#FES_INVALID_PDU_HEADER}: a type unknown or of the other side
     *         (FEI 0), HLEN not the type's (FEI 2), HDGST flag not as negotiated (FEI 1), PLEN below HLEN (FEI 4)
     */
    public static int headerBytes(MemorySegment pdu, boolean toController, boolean headerDigest) {
        int type = type(pdu);
        int expected = hlenOf(type);
        if (expected < 0 || fromHost(type) != toController) {
            throw invalid(TYPE_OFFSET, "invalid PDU-TYPE: type=0x" + Integer.toHexString(type) + ", expected one sent by "
                    + (toController ? "a host (0x0, 0x2, 0x4, 0x6)" : "a controller (0x1, 0x3, 0x5, 0x7, 0x9)"));
        }
        int hlen = hlen(pdu);
        if (hlen != expected) {
            throw invalid(HLEN_OFFSET, "invalid HLEN: type=0x" + Integer.toHexString(type) + ", hlen=" + hlen
                    + ", expected=" + expected);
        }
        boolean noDigest = type == TYPE_IC_REQ || type == TYPE_IC_RESP || type == TYPE_H2C_TERM_REQ
                || type == TYPE_C2H_TERM_REQ;
        boolean hdgst = (flags(pdu) & FLAG_HDGST) != 0;
        if (hdgst != (headerDigest && !noDigest)) {
            throw invalid(FLAGS_OFFSET, "invalid FLAGS: type=0x" + Integer.toHexString(type) + ", flags=0x"
                    + Integer.toHexString(flags(pdu)) + ", HDGST expected " + (headerDigest && !noDigest));
        }
        if (plen(pdu) < hlen) {
            throw invalid(PLEN_OFFSET, "invalid PLEN: type=0x" + Integer.toHexString(type) + ", plen=" + plen(pdu)
                    + ", min=" + hlen);
        }
        return hdgst ? hlen + PduDigest.LENGTH : hlen;
    }

    /**
     * Checks PDO and PLEN of a received PDU whose header (and header digest) passed {@link #headerBytes} and gives the
     * length of its data. Data is allowed in CapsuleCmd (in-capsule data), H2CData/C2HData (exactly DATAL bytes)
     * and the termination PDUs (up to {@link #MAX_TERM_DATA}); the others have none. With CPDA/HPDA 0 (no padding,
     * the only alignment this codec sends and accepts) data starts right after the header and its digest.
     *
     * @param pdu the PDU header as received (HLEN bytes at least)
     * @param dataDigest whether data digests were negotiated (data of a CapsuleCmd, H2CData or C2HData then carries
     *                   one: DDGST flag set, 4 more bytes in PLEN)
     * @param maxDataBytes the most data this receiver takes in this PDU (in-capsule size, MAXH2CDATA, buffer)
     * @return data bytes (digest excluded); 0 when none
     * @throws PduFormatException FES {@link TermPdu#FES_INVALID_PDU_HEADER}: PDO not 0 without data or not right after
     *         the header with data (FEI 3), PLEN not HLEN + digests + data (FEI 4), DDGST flag not as negotiated
     *         (FEI 1), DATAL not PLEN's (FEI 16); FES {@link TermPdu#FES_DATA_LIMIT_EXCEEDED}: more data than
     *         {@code maxDataBytes}
     */
    public static int dataBytes(MemorySegment pdu, boolean dataDigest, int maxDataBytes) {
        int type = type(pdu);
        int hlen = hlen(pdu);
        int flags = flags(pdu);
        int hd = (flags & FLAG_HDGST) != 0 ? PduDigest.LENGTH : 0;
        long plen = plen(pdu);
        int pdo = pdo(pdu);
        boolean ddgst = (flags & FLAG_DDGST) != 0;
        String t = "type=0x" + Integer.toHexString(type);
        if (type == TYPE_H2C_TERM_REQ || type == TYPE_C2H_TERM_REQ) {
            if (plen > hlen + MAX_TERM_DATA) {
                throw invalid(PLEN_OFFSET, "invalid PLEN: " + t + ", plen=" + plen + ", max=" + (hlen + MAX_TERM_DATA));
            }
            return (int) (plen - hlen);
        }
        long data = plen - hlen - hd;
        boolean mayCarry = type == TYPE_CAPSULE_CMD || type == TYPE_H2C_DATA || type == TYPE_C2H_DATA;
        if (data == 0 || !mayCarry) {
            if (data != 0) {
                throw invalid(PLEN_OFFSET, "invalid PLEN: " + t + ", plen=" + plen + ", expected=" + (hlen + hd));
            }
            if (pdo != 0) {
                throw invalid(PDO_OFFSET, "invalid PDO: " + t + ", pdo=" + pdo + ", expected=0 (no data)");
            }
            if (ddgst) {
                throw invalid(FLAGS_OFFSET, "invalid FLAGS: " + t + ", DDGST set without data");
            }
            if (type == TYPE_H2C_DATA || type == TYPE_C2H_DATA) {
                throw invalid(PLEN_OFFSET, "invalid PLEN: " + t + ", plen=" + plen + ", no data in a data PDU");
            }
            return 0;
        }
        if (pdo != hlen + hd) {
            throw invalid(PDO_OFFSET, "invalid PDO: " + t + ", pdo=" + pdo + ", expected=" + (hlen + hd)
                    + " (HLEN + header digest, alignment 0)");
        }
        if (ddgst != dataDigest) {
            throw invalid(FLAGS_OFFSET, "invalid FLAGS: " + t + ", flags=0x" + Integer.toHexString(flags)
                    + ", DDGST expected " + dataDigest);
        }
        data -= ddgst ? PduDigest.LENGTH : 0;
        if (data <= 0) {
            throw invalid(PLEN_OFFSET, "invalid PLEN: " + t + ", plen=" + plen + ", min=" + (pdo + 1
                    + (ddgst ? PduDigest.LENGTH : 0)));
        }
        if (type != TYPE_CAPSULE_CMD && DataPdu.dataLength(pdu) != data) {
            throw invalid(DataPdu.LENGTH_OFFSET, "invalid DATAL: " + t + ", datal="
                    + Integer.toUnsignedString(DataPdu.dataLength(pdu)) + ", expected=" + data + " (from PLEN)");
        }
        if (data > maxDataBytes) {
            throw new PduFormatException(TermPdu.FES_DATA_LIMIT_EXCEEDED, 0, "data too long: " + t + ", lengthBytes="
                    + data + ", max=" + maxDataBytes);
        }
        return (int) data;
    }

    private static PduFormatException invalid(int fieldOffset, String message) {
        return new PduFormatException(TermPdu.FES_INVALID_PDU_HEADER, fieldOffset, message);
    }
}
