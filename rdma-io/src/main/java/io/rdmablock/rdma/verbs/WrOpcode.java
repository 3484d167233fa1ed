package io.rdmablock.rdma.verbs;

/** Send work-request opcodes ({@code enum ibv_wr_opcode}). */
public enum WrOpcode {
    RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM, RDMA_READ
}
