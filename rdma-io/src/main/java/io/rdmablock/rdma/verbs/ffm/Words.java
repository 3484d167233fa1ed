package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_SGE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_WC;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SGE_LENGTH;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SGE_LKEY;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_IMM_DATA;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_NUM_SGE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_OPCODE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_SEND_FLAGS;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_BYTE_LEN;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_IMM_DATA;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_OPCODE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_QP_NUM;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_STATUS;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_VENDOR_ERR;

import java.nio.ByteOrder;

/**
 * Two adjacent u32 fields moved with one 8-byte access on the hot path (fewer bounds checks per WR/WC). Valid only
 * on little-endian machines and while the pairs stay adjacent; both are checked when this class loads, so a moved
 * field fails loudly (FfmLayoutsTest checks the offsets themselves against the headers).
 */
final class Words {
    static {
        require(ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN, "little-endian machine");
        require(SWR_OPCODE == SWR_NUM_SGE + 4, "ibv_send_wr.opcode follows num_sge");
        require(SWR_IMM_DATA == SWR_SEND_FLAGS + 4, "ibv_send_wr.imm_data follows send_flags");
        require(SGE_LKEY == SGE_LENGTH + 4 && IBV_SGE.byteSize() == 16, "ibv_sge.lkey follows length");
        require(WC_OPCODE == WC_STATUS + 4, "ibv_wc.opcode follows status");
        require(WC_BYTE_LEN == WC_VENDOR_ERR + 4, "ibv_wc.byte_len follows vendor_err");
        require(WC_QP_NUM == WC_IMM_DATA + 4 && IBV_WC.byteSize() == 48, "ibv_wc.qp_num follows imm_data");
    }

    private Words() {
    }

    /** {@code low} at the lower address, {@code high} 4 bytes above it. */
    static long pair(int low, int high) {
        return (low & 0xFFFF_FFFFL) | ((long) high << 32);
    }

    static int low(long pair) {
        return (int) pair;
    }

    static int high(long pair) {
        return (int) (pair >>> 32);
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new ExceptionInInitializerError("ffm provider layout assumption broken: " + what);
        }
    }
}
