package io.rdmablock.rdma.fabric.tcp;

import io.rdmablock.rdma.fabric.Wire;
import java.lang.foreign.MemorySegment;

/**
 * ICReq and ICResp, the 128-byte PDUs that set up an NVMe/TCP connection (Transport Specification 1.0 sections 3.3.2,
 * 3.3.3 and 3.4; Linux {@code struct nvme_tcp_icreq_pdu}, {@code struct nvme_tcp_icresp_pdu}). Both have the same
 * layout; neither carries a digest; HLEN = PLEN = 128, PDO 0.
 *
 * <pre>
 *  0          8        10          11        12                16                           128
 *  +----------+---------+-----------+---------+-----------------+----------------------------+
 *  | common   | PFV (0) | HPDA/CPDA | DGST    | MAXR2T (ICReq)  |          reserved          |
 *  | header   |  LE16   | dwords-1  | HDGSTF  | MAXH2CDATA      |                            |
 *  |          |         |           | DDGSTF  | (ICResp), LE32  |                            |
 *  +----------+---------+-----------+---------+-----------------+----------------------------+
 * </pre>
 */
public final class IcPdu {
    /** Bytes of the PDU (HLEN and PLEN). */
    public static final int LENGTH = 128;
    public static final int PFV_OFFSET = 8;
    /** HPDA in an ICReq, CPDA in an ICResp: data alignment in dwords, 0's based. */
    public static final int PDA_OFFSET = 10;
    public static final int DIGEST_OFFSET = 11;
    /** MAXR2T (0's based) in an ICReq, MAXH2CDATA (bytes) in an ICResp. */
    public static final int MAX_OFFSET = 12;

    /** The one PDU format version (section 3.3.2). */
    public static final int PFV_1_0 = 0;
    /** DGST bit: header digests on. */
    public static final int DIGEST_HEADER = 1;
    /** DGST bit: data digests on. */
    public static final int DIGEST_DATA = 1 << 1;
    /** Smallest MAXH2CDATA the specification allows (section 3.3.3: at least 4096, a multiple of 4). */
    public static final int MIN_MAXH2CDATA = 4096;
    /** Largest HPDA/CPDA (31: 128-byte alignment). */
    public static final int MAX_PDA = 31;

    private IcPdu() {
    }

    public static int pfv(MemorySegment pdu) {
        return Wire.u16(pdu, PFV_OFFSET);
    }

    /** HPDA (ICReq) or CPDA (ICResp). */
    public static int pda(MemorySegment pdu) {
        return Wire.u8(pdu, PDA_OFFSET);
    }

    public static int digest(MemorySegment pdu) {
        return Wire.u8(pdu, DIGEST_OFFSET);
    }

    /** MAXR2T (ICReq, 0's based) or MAXH2CDATA (ICResp, bytes). */
    public static int max(MemorySegment pdu) {
        return Wire.u32(pdu, MAX_OFFSET);
    }

    /**
     * Writes an ICReq.
     *
     * @param hpda host PDU data alignment, 0 .. 31 (dwords, 0's based)
     * @param digest {@link #DIGEST_HEADER} | {@link #DIGEST_DATA} as wanted
     * @param maxr2t R2Ts outstanding per command the host takes, 0's based
     * @throws IllegalArgumentException when hpda or digest are out of range
     */
    public static void icReq(MemorySegment pdu, int hpda, int digest, int maxr2t) {
        write(pdu, PduHeader.TYPE_IC_REQ, hpda, digest, maxr2t, "hpda");
    }

    /**
     * Writes an ICResp.
     *
     * @param cpda controller PDU data alignment, 0 .. 31 (dwords, 0's based)
     * @param digest the digests enabled: those the host asked for that the controller supports
     * @param maxh2cdata most data bytes per H2CData PDU, at least {@link #MIN_MAXH2CDATA}, a multiple of 4
     * @throws IllegalArgumentException when a value is out of range
     */
    public static void icResp(MemorySegment pdu, int cpda, int digest, int maxh2cdata) {
        if (maxh2cdata < MIN_MAXH2CDATA || maxh2cdata % 4 != 0) {
            throw new IllegalArgumentException("invalid MAXH2CDATA: maxh2cdata=" + maxh2cdata + ", min="
                    + MIN_MAXH2CDATA + ", multiple of 4");
        }
        write(pdu, PduHeader.TYPE_IC_RESP, cpda, digest, maxh2cdata, "cpda");
    }

    private static void write(MemorySegment pdu, int type, int pda, int digest, int max, String pdaName) {
        if (pda < 0 || pda > MAX_PDA) {
            throw new IllegalArgumentException("invalid " + pdaName + ": value=" + pda + ", min=0, max=" + MAX_PDA);
        }
        if ((digest & ~(DIGEST_HEADER | DIGEST_DATA)) != 0) {
            throw new IllegalArgumentException("invalid digest: value=0x" + Integer.toHexString(digest)
                    + ", allowed bits=0x3");
        }
        Wire.zero(pdu, 0, LENGTH);
        PduHeader.set(pdu, type, 0, LENGTH, 0, LENGTH);
        Wire.u16(pdu, PFV_OFFSET, PFV_1_0);
        Wire.u8(pdu, PDA_OFFSET, pda);
        Wire.u8(pdu, DIGEST_OFFSET, digest);
        Wire.u32(pdu, MAX_OFFSET, max);
    }

    /**
     * Checks a received ICReq (after {@link PduHeader#headerBytes} and {@link PduHeader#dataBytes}) as a controller
     * that supports PFV 0 and every HPDA (it sends no padding the host asks to be aligned only when HPDA is 0; a
     * larger HPDA is accepted as data offsets then aligned by the sender of C2HData, see docs/wire-protocol.md).
     *
     * @throws PduFormatException FES {@link TermPdu#FES_INVALID_PDU_HEADER}: PFV not 0 (FEI 8), HPDA above 31 (FEI
     *         10), unknown DGST bits (FEI 11)
     */
    public static void checkIcReq(MemorySegment pdu) {
        check(pdu, "ICReq", "HPDA");
    }

    /**
     * Checks a received ICResp as a host: PFV 0, CPDA 0 .. 31, DGST bits known, MAXH2CDATA at least 4096 and a
     * multiple of 4 (Linux {@code nvme_tcp_init_connection}).
     *
     * @throws PduFormatException FES {@link TermPdu#FES_INVALID_PDU_HEADER} naming the field
     */
    public static void checkIcResp(MemorySegment pdu) {
        check(pdu, "ICResp", "CPDA");
        int maxdata = max(pdu);
        if (Integer.compareUnsigned(maxdata, MIN_MAXH2CDATA) < 0 || maxdata % 4 != 0) {
            throw new PduFormatException(TermPdu.FES_INVALID_PDU_HEADER, MAX_OFFSET, "invalid ICResp MAXH2CDATA: "
                    + "maxh2cdata=" + Integer.toUnsignedString(maxdata) + ", min=" + MIN_MAXH2CDATA + ", multiple of 4");
        }
    }

    private static void check(MemorySegment pdu, String what, String pdaName) {
        if (pfv(pdu) != PFV_1_0) {
            throw new PduFormatException(TermPdu.FES_INVALID_PDU_HEADER, PFV_OFFSET, "invalid " + what + " PFV: pfv="
                    + pfv(pdu) + ", supported=" + PFV_1_0);
        }
        if (pda(pdu) > MAX_PDA) {
            throw new PduFormatException(TermPdu.FES_INVALID_PDU_HEADER, PDA_OFFSET, "invalid " + what + " " + pdaName
                    + ": value=" + pda(pdu) + ", max=" + MAX_PDA);
        }
        if ((digest(pdu) & ~(DIGEST_HEADER | DIGEST_DATA)) != 0) {
            throw new PduFormatException(TermPdu.FES_INVALID_PDU_HEADER, DIGEST_OFFSET, "invalid " + what
                    + " DGST: value=0x" + Integer.toHexString(digest(pdu)) + ", allowed bits=0x3");
        }
    }
}
