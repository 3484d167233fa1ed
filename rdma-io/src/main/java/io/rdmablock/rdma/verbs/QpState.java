package io.rdmablock.rdma.verbs;

/** Queue-pair states ({@code enum ibv_qp_state}); rdma_cm drives RESET -> INIT -> RTR -> RTS on connect. */
public enum QpState {
    RESET, INIT, RTR, RTS, SQD, SQE, ERROR
}
