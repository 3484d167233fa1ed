package io.rdmablock.rdma.verbs;

/** Work-completion status ({@code enum ibv_wc_status}, same order and ordinal values as in verbs.h). */
public enum WcStatus {
    SUCCESS, LOC_LEN_ERR, LOC_QP_OP_ERR, LOC_EEC_OP_ERR, LOC_PROT_ERR, WR_FLUSH_ERR, MW_BIND_ERR, BAD_RESP_ERR,
    LOC_ACCESS_ERR, REM_INV_REQ_ERR, REM_ACCESS_ERR, REM_OP_ERR, RETRY_EXC_ERR, RNR_RETRY_EXC_ERR,
    LOC_RDD_VIOL_ERR, REM_INV_RD_REQ_ERR, REM_ABORT_ERR, INV_EECN_ERR, INV_EEC_STATE_ERR, FATAL_ERR,
    RESP_TIMEOUT_ERR, GENERAL_ERR, TM_ERR, TM_RNDV_INCOMPLETE;

    private static final WcStatus[] VALUES = values();

    /** Maps a native {@code ibv_wc_status} value; unknown values map to GENERAL_ERR. */
    public static WcStatus of(int value) {
        return value >= 0 && value < VALUES.length ? VALUES[value] : GENERAL_ERR;
    }
}
