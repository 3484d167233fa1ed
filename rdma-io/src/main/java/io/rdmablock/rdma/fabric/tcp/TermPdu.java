package io.rdmablock.rdma.fabric.tcp;

import io.rdmablock.rdma.fabric.Wire;
import java.lang.foreign.MemorySegment;

/**
 * H2CTermReq and C2HTermReq: the PDUs that end an NVMe/TCP connection on a fatal transport error (Transport
 * Specification 1.0 sections 3.3.9, 3.3.10 and 3.6.2; Linux {@code struct nvme_tcp_term_pdu}). No digests; the data
 * is the header of the offending PDU, up to {@link PduHeader#MAX_TERM_DATA} bytes.
 *
 * <pre>
 *  0            8          10               14            24
 *  +------------+----------+----------------+-------------+------------------------------+
 *  | common hdr | FES LE16 | FEI LE32       | reserved    | offending PDU header (<=152) |
 *  +------------+----------+----------------+-------------+------------------------------+
 * </pre>
 */
public final class TermPdu {
    /** HLEN of the termination PDUs. */
    public static final int HLEN = 24;
    public static final int FES_OFFSET = 8;
    public static final int FEI_OFFSET = 10;

    /** Not a FES: a data digest error ({@link PduFormatException#isDataDigestError}). */
    public static final int FES_NONE = 0x00;
    /** A header field is invalid; FEI = its byte offset in the PDU header. */
    public static final int FES_INVALID_PDU_HEADER = 0x01;
    /** A PDU came out of sequence (e.g. H2CData without an R2T, a second ICReq). */
    public static final int FES_PDU_SEQUENCE = 0x02;
    public static final int FES_HEADER_DIGEST = 0x03;
    /** H2CData/C2HData outside the command's data or the R2T. */
    public static final int FES_DATA_OUT_OF_RANGE = 0x04;
    /** More data than allowed (MAXH2CDATA, in-capsule size); 05h is also R2T limit exceeded. */
    public static final int FES_DATA_LIMIT_EXCEEDED = 0x05;
    /** A parameter is not supported (e.g. PFV, an ICReq value). */
    public static final int FES_UNSUPPORTED_PARAMETER = 0x06;

    private TermPdu() {
    }

    public static int fes(MemorySegment pdu) {
        return Wire.u16(pdu, FES_OFFSET);
    }

    public static int fei(MemorySegment pdu) {
        return Wire.u32(pdu, FEI_OFFSET);
    }

    /**
     * Writes a termination PDU followed by the first bytes of the offending PDU's header.
     *
     * @param type {@link PduHeader#TYPE_C2H_TERM_REQ} or {@link PduHeader#TYPE_H2C_TERM_REQ}
     * @param offending the offending PDU's header as received, or null; at most {@link PduHeader#MAX_TERM_DATA} bytes
     *                  of it are copied (error path only)
     * @return PLEN: bytes of the whole PDU
     * @throws IllegalArgumentException for another type or a FES outside 1 .. 6
     */
    public static int write(MemorySegment pdu, int type, int fes, int fei, MemorySegment offending) {
        if (type != PduHeader.TYPE_C2H_TERM_REQ && type != PduHeader.TYPE_H2C_TERM_REQ) {
            throw new IllegalArgumentException("invalid termination PDU type: type=0x" + Integer.toHexString(type)
                    + ", expected 0x2 or 0x3");
        }
        if (fes < FES_INVALID_PDU_HEADER || fes > FES_UNSUPPORTED_PARAMETER) {
            throw new IllegalArgumentException("invalid FES: fes=" + fes + ", min=1, max=6");
        }
        int data = offending == null ? 0 : (int) Math.min(offending.byteSize(), PduHeader.MAX_TERM_DATA);
        Wire.zero(pdu, 0, HLEN);
        PduHeader.set(pdu, type, 0, HLEN, data == 0 ? 0 : HLEN, HLEN + data);
        Wire.u16(pdu, FES_OFFSET, fes);
        Wire.u32(pdu, FEI_OFFSET, fei);
        if (data > 0) {
            MemorySegment.copy(offending, 0, pdu, HLEN, data);
        }
        return HLEN + data;
    }
}
