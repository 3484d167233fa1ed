package io.rdmablock.rdma.fabric.tcp;

import io.rdmablock.rdma.fabric.Wire;
import java.lang.foreign.MemorySegment;

/**
 * H2CData, C2HData and R2T: the 24-byte headers that move command data (NVMe/TCP Transport Specification 1.0
 * sections 3.3.6 to 3.3.8; Linux {@code struct nvme_tcp_data_pdu}, {@code struct nvme_tcp_r2t_pdu}). All three
 * have the same layout; R2T carries no data.
 *
 * <pre>
 *  0            8        10       12                 16                 20          24
 *  +------------+--------+--------+------------------+------------------+-----------+
 *  | common hdr | CCCID  | TTAG   | DATAO / R2TO     | DATAL / R2TL     | reserved  |
 *  |            | (cid)  |        | LE32, from the   | LE32, bytes      |           |
 *  |            |        |        | command's start  |                  |           |
 *  +------------+--------+--------+------------------+------------------+-----------+
 *  data PDUs: [HDGST 4] data at PDO [DDGST 4]; flags LAST_PDU (last of the transfer or R2T), SUCCESS (C2HData)
 * </pre>
 *
 * CCCID is the SQE's cid as the host sent it (Linux copies the 16-bit {@code command_id} as is: little-endian on
 * the wire like the SQE); TTAG is the controller's tag for an R2T, echoed in the H2CData that answer it.
 */
public final class DataPdu {
    /** HLEN of the three types. */
    public static final int HLEN = 24;
    public static final int CCCID_OFFSET = 8;
    public static final int TTAG_OFFSET = 10;
    /** DATAO (data PDUs) or R2TO (R2T). */
    public static final int OFFSET_OFFSET = 12;
    /** DATAL (data PDUs) or R2TL (R2T). */
    public static final int LENGTH_OFFSET = 16;

    private DataPdu() {
    }

    public static int cccid(MemorySegment pdu) {
        return Wire.u16(pdu, CCCID_OFFSET);
    }

    public static int ttag(MemorySegment pdu) {
        return Wire.u16(pdu, TTAG_OFFSET);
    }

    /** DATAO or R2TO: byte offset of this data from the start of the command's data (unsigned 32 bits). */
    public static int dataOffset(MemorySegment pdu) {
        return Wire.u32(pdu, OFFSET_OFFSET);
    }

    /** DATAL or R2TL: bytes (unsigned 32 bits). */
    public static int dataLength(MemorySegment pdu) {
        return Wire.u32(pdu, LENGTH_OFFSET);
    }

    /**
     * Writes the header of a data PDU (H2CData or C2HData) with {@code dataBytes} of data to follow.
     *
     * @param type {@link PduHeader#TYPE_H2C_DATA} or {@link PduHeader#TYPE_C2H_DATA}
     * @param extraFlags {@link PduHeader#FLAG_LAST_PDU} and/or {@link PduHeader#FLAG_SUCCESS}
     * @return PLEN: bytes of the whole PDU
     * @throws IllegalArgumentException for another type, SUCCESS without LAST_PDU or on H2CData, or dataBytes below 1
     */
    public static int dataHeader(MemorySegment pdu, int type, boolean headerDigest, boolean dataDigest, int extraFlags,
            int cccid, int ttag, int dataOffset, int dataBytes) {
        if (type != PduHeader.TYPE_H2C_DATA && type != PduHeader.TYPE_C2H_DATA) {
            throw new IllegalArgumentException("invalid data PDU type: type=0x" + Integer.toHexString(type)
                    + ", expected 0x6 or 0x7");
        }
        if ((extraFlags & ~(PduHeader.FLAG_LAST_PDU | PduHeader.FLAG_SUCCESS)) != 0
                || (extraFlags & PduHeader.FLAG_SUCCESS) != 0 && (type == PduHeader.TYPE_H2C_DATA
                        || (extraFlags & PduHeader.FLAG_LAST_PDU) == 0)) {
            throw new IllegalArgumentException("invalid data PDU flags: flags=0x" + Integer.toHexString(extraFlags)
                    + ", allowed LAST_PDU (0x4), SUCCESS (0x8) on C2HData with LAST_PDU");
        }
        if (dataBytes < 1) {
            throw new IllegalArgumentException("invalid DATAL: lengthBytes=" + dataBytes + ", min=1");
        }
        int hd = headerDigest ? PduDigest.LENGTH : 0;
        int flags = extraFlags | (headerDigest ? PduHeader.FLAG_HDGST : 0) | (dataDigest ? PduHeader.FLAG_DDGST : 0);
        int plen = HLEN + hd + dataBytes + (dataDigest ? PduDigest.LENGTH : 0);
        PduHeader.set(pdu, type, flags, HLEN, HLEN + hd, plen);
        fields(pdu, cccid, ttag, dataOffset, dataBytes);
        return plen;
    }

    /**
     * Writes an R2T: the host is to send {@code r2tLength} bytes of command {@code cccid}'s data from
     * {@code r2tOffset} in H2CData PDUs tagged {@code ttag}.
     *
     * @return PLEN: 24, or 28 with a header digest
     * @throws IllegalArgumentException when r2tLength is below 1
     */
    public static int r2t(MemorySegment pdu, boolean headerDigest, int cccid, int ttag, int r2tOffset, int r2tLength) {
        if (r2tLength < 1) {
            throw new IllegalArgumentException("invalid R2TL: lengthBytes=" + r2tLength + ", min=1");
        }
        int plen = HLEN + (headerDigest ? PduDigest.LENGTH : 0);
        PduHeader.set(pdu, PduHeader.TYPE_R2T, headerDigest ? PduHeader.FLAG_HDGST : 0, HLEN, 0, plen);
        fields(pdu, cccid, ttag, r2tOffset, r2tLength);
        return plen;
    }

    private static void fields(MemorySegment pdu, int cccid, int ttag, int offset, int length) {
        Wire.u16(pdu, CCCID_OFFSET, cccid);
        Wire.u16(pdu, TTAG_OFFSET, ttag);
        Wire.u32(pdu, OFFSET_OFFSET, offset);
        Wire.u32(pdu, LENGTH_OFFSET, length);
        Wire.u32(pdu, 20, 0);
    }
}
