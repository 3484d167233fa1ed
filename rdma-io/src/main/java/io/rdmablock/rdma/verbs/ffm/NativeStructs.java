package io.rdmablock.rdma.verbs.ffm;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.MemoryLayout.unionLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The one layout definition of every native struct the ffm provider touches (x86_64 / aarch64 LP64, rdma-core
 * {@code <infiniband/verbs.h>}, {@code <rdma/rdma_cma.h>}, glibc {@code <netinet/in.h>}, {@code <poll.h>}).
 * Member names are the C field names, so {@code FfmLayoutsTest} can compare each one against {@code offsetof} and
 * {@code sizeof} printed by {@code src/test/c/ffm_layouts.c} compiled against the installed headers.
 *
 * <p>Structs marked partial ({@link #PARTIAL}) describe only a prefix (the fields we read); they are never allocated
 * here, only read through pointers returned by the libraries.
 */
final class NativeStructs {
    private NativeStructs() {
    }

    /** {@code enum ibv_wr_opcode} value of each {@link io.rdmablock.rdma.verbs.WrOpcode}, by ordinal. */
    static final int[] IBV_WR_OPCODE = {0 /* RDMA_WRITE */, 1 /* RDMA_WRITE_WITH_IMM */, 2 /* SEND */,
            3 /* SEND_WITH_IMM */, 4 /* RDMA_READ */, 9 /* SEND_WITH_INV */};
    /** {@code IBV_WC_WITH_IMM} in {@code ibv_wc.wc_flags}. */
    static final int IBV_WC_WITH_IMM = 1 << 1;
    /** {@code IBV_WC_WITH_INV} in {@code ibv_wc.wc_flags}: {@code invalidated_rkey} (the imm_data union) is valid. */
    static final int IBV_WC_WITH_INV = 1 << 3;
    /** {@code IBV_DEVICE_MEM_MGT_EXTENSIONS} in {@code ibv_device_attr.device_cap_flags}. */
    static final int IBV_DEVICE_MEM_MGT_EXTENSIONS = 1 << 21;

    /** {@code struct ibv_sge}: 16 bytes. */
    static final StructLayout IBV_SGE = structLayout(
            JAVA_LONG.withName("addr"), JAVA_INT.withName("length"), JAVA_INT.withName("lkey")).withName("ibv_sge");

    /**
     * {@code struct ibv_send_wr}: 128 bytes; only the {@code wr.rdma} arm of the {@code wr} union is used;
     * {@code imm_data} is one arm of a union whose other arm is {@code invalidate_rkey} (same offset and size).
     */
    static final StructLayout IBV_SEND_WR = structLayout(
            JAVA_LONG.withName("wr_id"), ADDRESS.withName("next"), ADDRESS.withName("sg_list"),
            JAVA_INT.withName("num_sge"), JAVA_INT.withName("opcode"), JAVA_INT.withName("send_flags"),
            JAVA_INT.withName("imm_data"),
            unionLayout(
                    structLayout(JAVA_LONG.withName("remote_addr"), JAVA_INT.withName("rkey"), paddingLayout(4))
                            .withName("rdma"),
                    structLayout(JAVA_LONG.withName("remote_addr"), JAVA_LONG.withName("compare_add"),
                            JAVA_LONG.withName("swap"), JAVA_INT.withName("rkey"), paddingLayout(4))
                            .withName("atomic")).withName("wr"),
            paddingLayout(56) /* qp_type union, bind_mw/tso union */).withName("ibv_send_wr");

    /** {@code struct ibv_recv_wr}: 32 bytes. */
    static final StructLayout IBV_RECV_WR = structLayout(
            JAVA_LONG.withName("wr_id"), ADDRESS.withName("next"), ADDRESS.withName("sg_list"),
            JAVA_INT.withName("num_sge"), paddingLayout(4)).withName("ibv_recv_wr");

    /** {@code struct ibv_wc}: 48 bytes; {@code imm_data} shares its union with {@code invalidated_rkey}. */
    static final StructLayout IBV_WC = structLayout(
            JAVA_LONG.withName("wr_id"), JAVA_INT.withName("status"), JAVA_INT.withName("opcode"),
            JAVA_INT.withName("vendor_err"), JAVA_INT.withName("byte_len"), JAVA_INT.withName("imm_data"),
            JAVA_INT.withName("qp_num"), JAVA_INT.withName("src_qp"), JAVA_INT.withName("wc_flags"),
            JAVA_SHORT.withName("pkey_index"), JAVA_SHORT.withName("slid"), JAVA_BYTE.withName("sl"),
            JAVA_BYTE.withName("dlid_path_bits"), paddingLayout(2)).withName("ibv_wc");

    /** {@code struct ibv_qp_init_attr} with its {@code struct ibv_qp_cap}: 64 bytes. */
    static final StructLayout IBV_QP_INIT_ATTR = structLayout(
            ADDRESS.withName("qp_context"), ADDRESS.withName("send_cq"), ADDRESS.withName("recv_cq"),
            ADDRESS.withName("srq"),
            structLayout(JAVA_INT.withName("max_send_wr"), JAVA_INT.withName("max_recv_wr"),
                    JAVA_INT.withName("max_send_sge"), JAVA_INT.withName("max_recv_sge"),
                    JAVA_INT.withName("max_inline_data")).withName("cap"),
            JAVA_INT.withName("qp_type"), JAVA_INT.withName("sq_sig_all"), paddingLayout(4))
            .withName("ibv_qp_init_attr");

    /** {@code struct ibv_qp_attr}: 144 bytes; the state and the connection knobs set on RTR/RTS are used. */
    static final StructLayout IBV_QP_ATTR = structLayout(
            JAVA_INT.withName("qp_state"), JAVA_INT.withName("cur_qp_state"),
            paddingLayout(118) /* path_mtu .. alt_pkey_index, en_sqd_async_notify, sq_draining */,
            JAVA_BYTE.withName("max_rd_atomic"), JAVA_BYTE.withName("max_dest_rd_atomic"),
            JAVA_BYTE.withName("min_rnr_timer"), JAVA_BYTE.withName("port_num"), JAVA_BYTE.withName("timeout"),
            JAVA_BYTE.withName("retry_cnt"), JAVA_BYTE.withName("rnr_retry"), paddingLayout(11))
            .withName("ibv_qp_attr");

    /** {@code struct ibv_device_attr}: 232 bytes. */
    static final StructLayout IBV_DEVICE_ATTR = structLayout(
            sequenceLayout(64, JAVA_BYTE).withName("fw_ver"), JAVA_LONG.withName("node_guid"),
            JAVA_LONG.withName("sys_image_guid"), JAVA_LONG.withName("max_mr_size"),
            JAVA_LONG.withName("page_size_cap"), JAVA_INT.withName("vendor_id"), JAVA_INT.withName("vendor_part_id"),
            JAVA_INT.withName("hw_ver"), JAVA_INT.withName("max_qp"), JAVA_INT.withName("max_qp_wr"),
            JAVA_INT.withName("device_cap_flags"), JAVA_INT.withName("max_sge"), JAVA_INT.withName("max_sge_rd"),
            JAVA_INT.withName("max_cq"), JAVA_INT.withName("max_cqe"), JAVA_INT.withName("max_mr"),
            JAVA_INT.withName("max_pd"), JAVA_INT.withName("max_qp_rd_atom"), JAVA_INT.withName("max_ee_rd_atom"),
            JAVA_INT.withName("max_res_rd_atom"), JAVA_INT.withName("max_qp_init_rd_atom"), paddingLayout(72))
            .withName("ibv_device_attr");

    /** {@code struct ibv_device} (partial): node and transport type, kernel device name. */
    static final StructLayout IBV_DEVICE = structLayout(
            paddingLayout(16) /* _ops */, JAVA_INT.withName("node_type"), JAVA_INT.withName("transport_type"),
            sequenceLayout(64, JAVA_BYTE).withName("name")).withName("ibv_device");

    /** {@code struct ibv_context_ops}: 32 function pointers; the four data-path ones are named. */
    static final StructLayout IBV_CONTEXT_OPS = structLayout(
            paddingLayout(11 * 8), ADDRESS.withName("poll_cq"), ADDRESS.withName("req_notify_cq"),
            paddingLayout(12 * 8), ADDRESS.withName("post_send"), ADDRESS.withName("post_recv"),
            paddingLayout(5 * 8)).withName("ops");

    /** {@code struct ibv_context} (partial, up to {@code num_comp_vectors}). */
    static final StructLayout IBV_CONTEXT = structLayout(
            ADDRESS.withName("device"), IBV_CONTEXT_OPS, JAVA_INT.withName("cmd_fd"), JAVA_INT.withName("async_fd"),
            JAVA_INT.withName("num_comp_vectors")).withName("ibv_context");

    /** {@code struct ibv_async_event}: 16 bytes; {@code element} is a union whose {@code cq} arm is used. */
    static final StructLayout IBV_ASYNC_EVENT = structLayout(
            unionLayout(ADDRESS.withName("cq")).withName("element"), JAVA_INT.withName("event_type"),
            paddingLayout(4)).withName("ibv_async_event");

    /** {@code struct ibv_pd}: 16 bytes. */
    static final StructLayout IBV_PD = structLayout(
            ADDRESS.withName("context"), JAVA_INT.withName("handle"), paddingLayout(4)).withName("ibv_pd");

    /** {@code struct ibv_mr}: 48 bytes. */
    static final StructLayout IBV_MR = structLayout(
            ADDRESS.withName("context"), ADDRESS.withName("pd"), ADDRESS.withName("addr"), JAVA_LONG.withName("length"),
            JAVA_INT.withName("handle"), JAVA_INT.withName("lkey"), JAVA_INT.withName("rkey"), paddingLayout(4))
            .withName("ibv_mr");

    /** {@code struct ibv_comp_channel}: 16 bytes. */
    static final StructLayout IBV_COMP_CHANNEL = structLayout(
            ADDRESS.withName("context"), JAVA_INT.withName("fd"), JAVA_INT.withName("refcnt"))
            .withName("ibv_comp_channel");

    /** {@code struct ibv_cq} (partial, up to {@code cqe}). */
    static final StructLayout IBV_CQ = structLayout(
            ADDRESS.withName("context"), ADDRESS.withName("channel"), ADDRESS.withName("cq_context"),
            JAVA_INT.withName("handle"), JAVA_INT.withName("cqe")).withName("ibv_cq");

    /** {@code struct ibv_qp} (partial, up to {@code qp_type}). */
    static final StructLayout IBV_QP = structLayout(
            ADDRESS.withName("context"), ADDRESS.withName("qp_context"), ADDRESS.withName("pd"),
            ADDRESS.withName("send_cq"), ADDRESS.withName("recv_cq"), ADDRESS.withName("srq"),
            JAVA_INT.withName("handle"), JAVA_INT.withName("qp_num"), JAVA_INT.withName("state"),
            JAVA_INT.withName("qp_type")).withName("ibv_qp");

    /** {@code struct rdma_event_channel}: 4 bytes. */
    static final StructLayout RDMA_EVENT_CHANNEL = structLayout(JAVA_INT.withName("fd")).withName("rdma_event_channel");

    /** {@code struct rdma_cm_id} (partial, up to {@code route.addr.dst_storage}). */
    static final StructLayout RDMA_CM_ID = structLayout(
            ADDRESS.withName("verbs"), ADDRESS.withName("channel"), ADDRESS.withName("context"), ADDRESS.withName("qp"),
            structLayout(structLayout(
                    sequenceLayout(128, JAVA_BYTE).withName("src_storage"),
                    sequenceLayout(128, JAVA_BYTE).withName("dst_storage")).withName("addr")).withName("route"))
            .withName("rdma_cm_id");

    /** {@code struct rdma_cm_event} (partial: the {@code param.conn} arm up to {@code rnr_retry_count}). */
    static final StructLayout RDMA_CM_EVENT = structLayout(
            ADDRESS.withName("id"), ADDRESS.withName("listen_id"), JAVA_INT.withName("event"),
            JAVA_INT.withName("status"),
            structLayout(structLayout(ADDRESS.withName("private_data"), JAVA_BYTE.withName("private_data_len"),
                    JAVA_BYTE.withName("responder_resources"), JAVA_BYTE.withName("initiator_depth"),
                    JAVA_BYTE.withName("flow_control"), JAVA_BYTE.withName("retry_count"),
                    JAVA_BYTE.withName("rnr_retry_count")).withName("conn")).withName("param"))
            .withName("rdma_cm_event");

    /** {@code struct rdma_conn_param}: 24 bytes. */
    static final StructLayout RDMA_CONN_PARAM = structLayout(
            ADDRESS.withName("private_data"), JAVA_BYTE.withName("private_data_len"),
            JAVA_BYTE.withName("responder_resources"), JAVA_BYTE.withName("initiator_depth"),
            JAVA_BYTE.withName("flow_control"), JAVA_BYTE.withName("retry_count"),
            JAVA_BYTE.withName("rnr_retry_count"), JAVA_BYTE.withName("srq"), paddingLayout(1),
            JAVA_INT.withName("qp_num"), paddingLayout(4)).withName("rdma_conn_param");

    /** {@code struct sockaddr_in}: 16 bytes; port and address in network byte order. */
    static final StructLayout SOCKADDR_IN = structLayout(
            JAVA_SHORT.withName("sin_family"), JAVA_SHORT.withName("sin_port"), JAVA_INT.withName("sin_addr"),
            sequenceLayout(8, JAVA_BYTE).withName("sin_zero")).withName("sockaddr_in");

    /** {@code struct sockaddr_in6}: 28 bytes. */
    static final StructLayout SOCKADDR_IN6 = structLayout(
            JAVA_SHORT.withName("sin6_family"), JAVA_SHORT.withName("sin6_port"), JAVA_INT.withName("sin6_flowinfo"),
            sequenceLayout(16, JAVA_BYTE).withName("sin6_addr"), JAVA_INT.withName("sin6_scope_id"))
            .withName("sockaddr_in6");

    /** {@code struct pollfd}: 8 bytes. */
    static final StructLayout POLLFD = structLayout(
            JAVA_INT.withName("fd"), JAVA_SHORT.withName("events"), JAVA_SHORT.withName("revents")).withName("pollfd");

    /** Every layout by C struct name (the test iterates this). */
    static final Map<String, StructLayout> ALL = byName(IBV_SGE, IBV_SEND_WR, IBV_RECV_WR, IBV_WC, IBV_QP_INIT_ATTR,
            IBV_QP_ATTR, IBV_DEVICE_ATTR, IBV_DEVICE, IBV_CONTEXT, IBV_ASYNC_EVENT, IBV_PD, IBV_MR, IBV_COMP_CHANNEL, IBV_CQ, IBV_QP,
            RDMA_EVENT_CHANNEL, RDMA_CM_ID, RDMA_CM_EVENT, RDMA_CONN_PARAM, SOCKADDR_IN, SOCKADDR_IN6, POLLFD);

    /** Structs described only up to the last field read; their C sizeof is larger. */
    static final Set<String> PARTIAL = Set.of("ibv_device", "ibv_context", "ibv_cq", "ibv_qp", "rdma_cm_id",
            "rdma_cm_event");

    // Offsets used on the hot path, resolved once.
    static final long SGE_ADDR = off(IBV_SGE, "addr");
    static final long SGE_LENGTH = off(IBV_SGE, "length");
    static final long SGE_LKEY = off(IBV_SGE, "lkey");
    static final long SWR_WR_ID = off(IBV_SEND_WR, "wr_id");
    static final long SWR_NEXT = off(IBV_SEND_WR, "next");
    static final long SWR_SG_LIST = off(IBV_SEND_WR, "sg_list");
    static final long SWR_NUM_SGE = off(IBV_SEND_WR, "num_sge");
    static final long SWR_OPCODE = off(IBV_SEND_WR, "opcode");
    static final long SWR_SEND_FLAGS = off(IBV_SEND_WR, "send_flags");
    static final long SWR_IMM_DATA = off(IBV_SEND_WR, "imm_data");
    static final long SWR_REMOTE_ADDR = off(IBV_SEND_WR, "wr", "rdma", "remote_addr");
    static final long SWR_RKEY = off(IBV_SEND_WR, "wr", "rdma", "rkey");
    static final long RWR_WR_ID = off(IBV_RECV_WR, "wr_id");
    static final long RWR_NEXT = off(IBV_RECV_WR, "next");
    static final long RWR_SG_LIST = off(IBV_RECV_WR, "sg_list");
    static final long RWR_NUM_SGE = off(IBV_RECV_WR, "num_sge");
    static final long WC_WR_ID = off(IBV_WC, "wr_id");
    static final long WC_STATUS = off(IBV_WC, "status");
    static final long WC_OPCODE = off(IBV_WC, "opcode");
    static final long WC_VENDOR_ERR = off(IBV_WC, "vendor_err");
    static final long WC_BYTE_LEN = off(IBV_WC, "byte_len");
    static final long WC_IMM_DATA = off(IBV_WC, "imm_data");
    static final long WC_QP_NUM = off(IBV_WC, "qp_num");
    static final long WC_WC_FLAGS = off(IBV_WC, "wc_flags");
    static final long CTX_DEVICE = off(IBV_CONTEXT, "device");
    static final long CTX_POLL_CQ = off(IBV_CONTEXT, "ops", "poll_cq");
    static final long CTX_REQ_NOTIFY_CQ = off(IBV_CONTEXT, "ops", "req_notify_cq");
    static final long CTX_POST_SEND = off(IBV_CONTEXT, "ops", "post_send");
    static final long CTX_POST_RECV = off(IBV_CONTEXT, "ops", "post_recv");

    static long off(MemoryLayout layout, String... path) {
        MemoryLayout.PathElement[] elements = new MemoryLayout.PathElement[path.length];
        for (int i = 0; i < path.length; i++) {
            elements[i] = groupElement(path[i]);
        }
        return layout.byteOffset(elements);
    }

    private static Map<String, StructLayout> byName(StructLayout... layouts) {
        Map<String, StructLayout> m = new LinkedHashMap<>();
        for (StructLayout l : layouts) {
            m.put(l.name().orElseThrow(), l);
        }
        return Map.copyOf(m);
    }
}
