package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.fabric.tcp.CapsulePdu;
import io.rdmablock.rdma.fabric.tcp.DataPdu;
import io.rdmablock.rdma.fabric.tcp.PduDigest;
import io.rdmablock.rdma.fabric.tcp.PduHeader;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * The NVMe/TCP buffers of one {@link Request} of a {@link TcpQueue}, all made once with the queue (no allocation per
 * command): a receive header buffer ({@link PduHeader#MAX_HLEN} + digest: the CapsuleCmd that binds to the request is
 * read straight into it, so the SQE stays where it landed), a transmit header buffer (R2T or C2HData header +
 * digest), the CapsuleResp PDU (its CQE is the request's {@link Request#response}) and a {@link ByteBuffer} view of
 * the request's data buffer that socket reads and writes use in place (in-capsule data, H2CData and C2HData payload:
 * no copy). Poller thread only.
 */
final class TcpSlot {
    /** Bytes of a slot's header area: receive header (132), transmit header (28), CapsuleResp (28), aligned. */
    static final int META_BYTES = 256;
    private static final int RX_OFFSET = 0;
    private static final int TX_OFFSET = 136;
    private static final int RESP_OFFSET = 168;

    final Request request;
    /** The received PDU header (CapsuleCmd: its SQE is {@link #sqe}). */
    final MemorySegment rxHeader;
    final ByteBuffer rxHeaderBuffer;
    final MemorySegment sqe;
    final MemorySegment sgl;
    /** R2T / C2HData header being sent. */
    final MemorySegment txHeader;
    final ByteBuffer txHeaderBuffer;
    /** CapsuleResp PDU: header then the CQE ({@link Request#response}). */
    final MemorySegment resp;
    final ByteBuffer respBuffer;
    /** The request's data buffer as a {@link ByteBuffer} (position and limit set per transfer). */
    final ByteBuffer data;
    /** H2CData: the next DATAO expected (bytes of the R2T received so far). */
    int h2cNext;
    /** True while an R2T of this request waits for its H2CData. */
    boolean r2tActive;

    /**
     * @param index the request's index (its R2T transfer tag)
     * @param meta {@link #META_BYTES} bytes for the headers
     * @param dataBuffer the request's data buffer
     * @param dataMr     the registered region holding {@code dataBuffer} (its keys are the request's, in-capsule data
     *                   included: it lands in the data buffer too), or null when not registered (keys 0)
     */
    TcpSlot(int index, MemorySegment meta, MemorySegment dataBuffer, io.rdmablock.rdma.verbs.MemoryRegion dataMr) {
        rxHeader = meta.asSlice(RX_OFFSET, PduHeader.MAX_HLEN + PduDigest.LENGTH);
        rxHeaderBuffer = rxHeader.asByteBuffer();
        sqe = rxHeader.asSlice(CapsulePdu.ENTRY_OFFSET, SqeDescriptor.LENGTH);
        sgl = SqeDescriptor.sgl1(sqe);
        txHeader = meta.asSlice(TX_OFFSET, DataPdu.HLEN + PduDigest.LENGTH);
        txHeaderBuffer = txHeader.asByteBuffer();
        resp = meta.asSlice(RESP_OFFSET, CapsulePdu.RESP_HLEN + PduDigest.LENGTH);
        respBuffer = resp.asByteBuffer();
        data = dataBuffer.asByteBuffer();
        int lkey = dataMr == null ? 0 : dataMr.lkey();
        int rkey = dataMr == null ? 0 : dataMr.rkey();
        request = new Request(index, dataBuffer, lkey, rkey, rkey, lkey, CapsulePdu.cqe(resp), 0);
    }
}
