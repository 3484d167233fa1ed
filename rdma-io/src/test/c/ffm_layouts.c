/*
 * Prints the size and the field offsets/sizes of every native struct the ffm verbs provider touches, as seen by
 * the installed rdma-core headers. Compiled and run by FfmLayoutsTest (gcc ffm_layouts.c -o target/...).
 *
 * Output, one line each:  <struct> sizeof <bytes>  |  <struct> <field.path> <offset> <size>  |  const <name> <value>
 */
#include <stddef.h>
#include <stdio.h>
#include <poll.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define S(type) printf("%s sizeof %zu\n", #type, sizeof(struct type))
#define K(name) printf("const %s %lld\n", #name, (long long) (name))
#define U(type, path) printf("const offsetof.%s.%s %zu\n", #type, #path, offsetof(struct type, path))
#define F(type, path) printf("%s %s %zu %zu\n", #type, #path, offsetof(struct type, path), sizeof(((struct type *)0)->path))

int main(void) {
    S(ibv_sge); F(ibv_sge, addr); F(ibv_sge, length); F(ibv_sge, lkey);

    S(ibv_send_wr); F(ibv_send_wr, wr_id); F(ibv_send_wr, next); F(ibv_send_wr, sg_list); F(ibv_send_wr, num_sge);
    F(ibv_send_wr, opcode); F(ibv_send_wr, send_flags); F(ibv_send_wr, imm_data);
    F(ibv_send_wr, wr); F(ibv_send_wr, wr.rdma.remote_addr); F(ibv_send_wr, wr.rdma.rkey);

    K(IBV_WR_RDMA_WRITE); K(IBV_WR_RDMA_WRITE_WITH_IMM); K(IBV_WR_SEND); K(IBV_WR_SEND_WITH_IMM);
    K(IBV_WR_RDMA_READ); K(IBV_WR_SEND_WITH_INV); K(IBV_WC_WITH_IMM); K(IBV_WC_WITH_INV);
    K(IBV_DEVICE_MEM_MGT_EXTENSIONS);
    U(ibv_send_wr, invalidate_rkey); U(ibv_wc, invalidated_rkey); /* union arms of imm_data */

    S(ibv_recv_wr); F(ibv_recv_wr, wr_id); F(ibv_recv_wr, next); F(ibv_recv_wr, sg_list); F(ibv_recv_wr, num_sge);

    S(ibv_wc); F(ibv_wc, wr_id); F(ibv_wc, status); F(ibv_wc, opcode); F(ibv_wc, vendor_err); F(ibv_wc, byte_len);
    F(ibv_wc, imm_data); F(ibv_wc, qp_num); F(ibv_wc, src_qp); F(ibv_wc, wc_flags); F(ibv_wc, pkey_index);
    F(ibv_wc, slid); F(ibv_wc, sl); F(ibv_wc, dlid_path_bits);

    S(ibv_qp_init_attr); F(ibv_qp_init_attr, qp_context); F(ibv_qp_init_attr, send_cq);
    F(ibv_qp_init_attr, recv_cq); F(ibv_qp_init_attr, srq); F(ibv_qp_init_attr, cap);
    F(ibv_qp_init_attr, cap.max_send_wr); F(ibv_qp_init_attr, cap.max_recv_wr); F(ibv_qp_init_attr, cap.max_send_sge);
    F(ibv_qp_init_attr, cap.max_recv_sge); F(ibv_qp_init_attr, cap.max_inline_data); F(ibv_qp_init_attr, qp_type);
    F(ibv_qp_init_attr, sq_sig_all);

    S(ibv_qp_attr); F(ibv_qp_attr, qp_state); F(ibv_qp_attr, cur_qp_state); F(ibv_qp_attr, max_rd_atomic);
    F(ibv_qp_attr, max_dest_rd_atomic); F(ibv_qp_attr, min_rnr_timer); F(ibv_qp_attr, port_num);
    F(ibv_qp_attr, timeout); F(ibv_qp_attr, retry_cnt); F(ibv_qp_attr, rnr_retry);

    S(ibv_device_attr); F(ibv_device_attr, fw_ver); F(ibv_device_attr, node_guid); F(ibv_device_attr, sys_image_guid);
    F(ibv_device_attr, max_mr_size); F(ibv_device_attr, page_size_cap); F(ibv_device_attr, vendor_id);
    F(ibv_device_attr, vendor_part_id); F(ibv_device_attr, hw_ver); F(ibv_device_attr, max_qp);
    F(ibv_device_attr, max_qp_wr); F(ibv_device_attr, device_cap_flags); F(ibv_device_attr, max_sge);
    F(ibv_device_attr, max_sge_rd); F(ibv_device_attr, max_cq); F(ibv_device_attr, max_cqe);
    F(ibv_device_attr, max_mr); F(ibv_device_attr, max_pd); F(ibv_device_attr, max_qp_rd_atom);
    F(ibv_device_attr, max_ee_rd_atom); F(ibv_device_attr, max_res_rd_atom); F(ibv_device_attr, max_qp_init_rd_atom);

    S(ibv_device); F(ibv_device, node_type); F(ibv_device, transport_type); F(ibv_device, name);

    S(ibv_context); F(ibv_context, device); F(ibv_context, ops); F(ibv_context, ops.poll_cq);
    F(ibv_context, ops.req_notify_cq); F(ibv_context, ops.post_send); F(ibv_context, ops.post_recv);
    F(ibv_context, cmd_fd); F(ibv_context, async_fd); F(ibv_context, num_comp_vectors);

    S(ibv_async_event); F(ibv_async_event, element); F(ibv_async_event, element.cq); F(ibv_async_event, event_type);

    S(ibv_pd); F(ibv_pd, context); F(ibv_pd, handle);

    S(ibv_mr); F(ibv_mr, context); F(ibv_mr, pd); F(ibv_mr, addr); F(ibv_mr, length); F(ibv_mr, handle);
    F(ibv_mr, lkey); F(ibv_mr, rkey);

    S(ibv_comp_channel); F(ibv_comp_channel, context); F(ibv_comp_channel, fd); F(ibv_comp_channel, refcnt);

    S(ibv_cq); F(ibv_cq, context); F(ibv_cq, channel); F(ibv_cq, cq_context); F(ibv_cq, handle); F(ibv_cq, cqe);

    S(ibv_qp); F(ibv_qp, context); F(ibv_qp, qp_context); F(ibv_qp, pd); F(ibv_qp, send_cq); F(ibv_qp, recv_cq);
    F(ibv_qp, srq); F(ibv_qp, handle); F(ibv_qp, qp_num); F(ibv_qp, state); F(ibv_qp, qp_type);

    S(rdma_event_channel); F(rdma_event_channel, fd);

    S(rdma_cm_id); F(rdma_cm_id, verbs); F(rdma_cm_id, channel); F(rdma_cm_id, context); F(rdma_cm_id, qp);
    F(rdma_cm_id, route.addr.src_storage); F(rdma_cm_id, route.addr.dst_storage);

    S(rdma_cm_event); F(rdma_cm_event, id); F(rdma_cm_event, listen_id); F(rdma_cm_event, event);
    F(rdma_cm_event, status); F(rdma_cm_event, param.conn.private_data); F(rdma_cm_event, param.conn.private_data_len);
    F(rdma_cm_event, param.conn.responder_resources); F(rdma_cm_event, param.conn.initiator_depth);
    F(rdma_cm_event, param.conn.flow_control); F(rdma_cm_event, param.conn.retry_count);
    F(rdma_cm_event, param.conn.rnr_retry_count);

    S(rdma_conn_param); F(rdma_conn_param, private_data); F(rdma_conn_param, private_data_len);
    F(rdma_conn_param, responder_resources); F(rdma_conn_param, initiator_depth); F(rdma_conn_param, flow_control);
    F(rdma_conn_param, retry_count); F(rdma_conn_param, rnr_retry_count); F(rdma_conn_param, srq);
    F(rdma_conn_param, qp_num);

    S(sockaddr_in); F(sockaddr_in, sin_family); F(sockaddr_in, sin_port); F(sockaddr_in, sin_addr);
    F(sockaddr_in, sin_zero);
    S(sockaddr_in6); F(sockaddr_in6, sin6_family); F(sockaddr_in6, sin6_port); F(sockaddr_in6, sin6_flowinfo);
    F(sockaddr_in6, sin6_addr); F(sockaddr_in6, sin6_scope_id);
    S(pollfd); F(pollfd, fd); F(pollfd, events); F(pollfd, revents);
    return 0;
}
