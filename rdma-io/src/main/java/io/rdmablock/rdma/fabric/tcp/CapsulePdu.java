package io.rdmablock.rdma.fabric.tcp;

import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;

import java.lang.foreign.MemorySegment;

/**
 * CapsuleCmd and CapsuleResp (NVMe/TCP Transport Specification 1.0 sections 3.3.4, 3.3.5; Linux
 * {@code struct nvme_tcp_cmd_pdu}, {@code struct nvme_tcp_rsp_pdu}): the common header then the 64-byte SQE
 * ({@link SqeDescriptor}) or the 16-byte CQE ({@link CqeDescriptor}) in place; a CapsuleCmd may carry in-capsule data
 * after the header (and its digest) at PDO.
 *
 * <pre>
 * CapsuleCmd:  | common header 8 | SQE 64 | [HDGST 4] | [in-capsule data] | [DDGST 4] |   HLEN 72
 * CapsuleResp: | common header 8 | CQE 16 | [HDGST 4] |                                  HLEN 24
 * </pre>
 */
public final class CapsulePdu {
    /** HLEN of a CapsuleCmd: 8 + 64. */
    public static final int CMD_HLEN = PduHeader.LENGTH + SqeDescriptor.LENGTH;
    /** HLEN of a CapsuleResp: 8 + 16. */
    public static final int RESP_HLEN = PduHeader.LENGTH + CqeDescriptor.LENGTH;
    /** Offset of the SQE or CQE in the PDU. */
    public static final int ENTRY_OFFSET = PduHeader.LENGTH;

    private CapsulePdu() {
    }

    /** The SQE of a CapsuleCmd, as a 64-byte slice of {@code pdu} (allocates a segment: cache it per buffer). */
    public static MemorySegment sqe(MemorySegment pdu) {
        return pdu.asSlice(ENTRY_OFFSET, SqeDescriptor.LENGTH);
    }

    /** The CQE of a CapsuleResp, as a 16-byte slice of {@code pdu} (allocates a segment: cache it per buffer). */
    public static MemorySegment cqe(MemorySegment pdu) {
        return pdu.asSlice(ENTRY_OFFSET, CqeDescriptor.LENGTH);
    }

    /**
     * Writes a CapsuleCmd's common header for an SQE already at {@link #ENTRY_OFFSET} and {@code dataBytes} of
     * in-capsule data to follow.
     *
     * @param headerDigest whether a header digest follows the header (the caller writes it,
     *                     {@link PduDigest#putHeaderDigest})
     * @param dataDigest whether a data digest follows the data (only when {@code dataBytes} > 0)
     * @return PLEN: bytes of the whole PDU
     * @throws IllegalArgumentException when dataBytes is negative
     */
    public static int cmdHeader(MemorySegment pdu, boolean headerDigest, boolean dataDigest, int dataBytes) {
        if (dataBytes < 0) {
            throw new IllegalArgumentException("invalid in-capsule data length: lengthBytes=" + dataBytes + ", min=0");
        }
        int hd = headerDigest ? PduDigest.LENGTH : 0;
        boolean dd = dataDigest && dataBytes > 0;
        int flags = (headerDigest ? PduHeader.FLAG_HDGST : 0) | (dd ? PduHeader.FLAG_DDGST : 0);
        int pdo = dataBytes > 0 ? CMD_HLEN + hd : 0;
        int plen = CMD_HLEN + hd + dataBytes + (dd ? PduDigest.LENGTH : 0);
        PduHeader.set(pdu, PduHeader.TYPE_CAPSULE_CMD, flags, CMD_HLEN, pdo, plen);
        return plen;
    }

    /**
     * Writes a CapsuleResp's common header for a CQE already at {@link #ENTRY_OFFSET}.
     *
     * @return PLEN: 24, or 28 with a header digest (the caller writes it, {@link PduDigest#putHeaderDigest})
     */
    public static int respHeader(MemorySegment pdu, boolean headerDigest) {
        int plen = RESP_HLEN + (headerDigest ? PduDigest.LENGTH : 0);
        PduHeader.set(pdu, PduHeader.TYPE_CAPSULE_RESP, headerDigest ? PduHeader.FLAG_HDGST : 0, RESP_HLEN, 0, plen);
        return plen;
    }
}
