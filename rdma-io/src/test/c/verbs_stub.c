/*
 * A fake RDMA device for tests and the hot-path benchmark: one ibv_context whose ops table points at the stub
 * post_send/post_recv/poll_cq/req_notify_cq below, one CQ, one QP. A signaled send WR (and every recv WR) completes
 * at once into a ring that poll_cq drains. Built with: gcc -O2 -shared -fPIC verbs_stub.c -o libverbsstub.so
 * Never a real device: no libibverbs call may be made on these objects (only the ops table is used).
 */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <infiniband/verbs.h>

#define RING 4096u

static struct ibv_device dev;
static struct ibv_context ctx;
static struct ibv_comp_channel channel;
static struct ibv_cq cq;
static struct ibv_qp qp;
static struct ibv_wc ring[RING];
static unsigned head, tail;
static int fail_errno, fail_index = -1, poll_error;

/* last posted send WR, for tests */
static struct ibv_send_wr last_wr;
static struct ibv_sge last_sge[4];
static unsigned long sends, recvs;

static int push(uint64_t wr_id, enum ibv_wc_opcode op, uint32_t len, uint32_t imm, unsigned flags, uint32_t qpn) {
    if (head - tail >= RING) {
        return ENOMEM;
    }
    struct ibv_wc *wc = &ring[head++ % RING];
    wc->wr_id = wr_id;
    wc->status = IBV_WC_SUCCESS;
    wc->opcode = op;
    wc->vendor_err = 0;
    wc->byte_len = len;
    wc->imm_data = imm;
    wc->qp_num = qpn;
    wc->src_qp = 0;
    wc->wc_flags = flags;
    return 0;
}

static int stub_post_send(struct ibv_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad) {
    for (int i = 0; wr; wr = wr->next, i++) {
        if (i == fail_index || wr->num_sge > 4) {
            int e = wr->num_sge > 4 ? EINVAL : fail_errno;
            fail_index = -1;
            *bad = wr;
            return e;
        }
        uint32_t len = 0;
        for (int s = 0; s < wr->num_sge; s++) {
            len += wr->sg_list[s].length;
            last_sge[s] = wr->sg_list[s];
        }
        last_wr = *wr;
        sends++;
        if (wr->send_flags & IBV_SEND_SIGNALED) {
            enum ibv_wc_opcode op = wr->opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ
                    : (wr->opcode == IBV_WR_RDMA_WRITE || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) ? IBV_WC_RDMA_WRITE
                    : IBV_WC_SEND;
            int imm = wr->opcode == IBV_WR_SEND_WITH_IMM || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
            if (push(wr->wr_id, op, len, wr->imm_data, imm ? IBV_WC_WITH_IMM : 0, q->qp_num)) {
                *bad = wr;
                return ENOMEM;
            }
            /* loopback of a SEND_WITH_INV: the receiver's completion, wr_id with bit 63 set */
            if (wr->opcode == IBV_WR_SEND_WITH_INV
                    && push(wr->wr_id | 1ULL << 63, IBV_WC_RECV, len, wr->invalidate_rkey, IBV_WC_WITH_INV, q->qp_num)) {
                *bad = wr;
                return ENOMEM;
            }
        }
    }
    return 0;
}

static int stub_post_recv(struct ibv_qp *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
    for (; wr; wr = wr->next) {
        uint32_t len = 0;
        for (int s = 0; s < wr->num_sge; s++) {
            len += wr->sg_list[s].length;
        }
        recvs++;
        if (push(wr->wr_id, IBV_WC_RECV, len, 0, 0, q->qp_num)) {
            *bad = wr;
            return ENOMEM;
        }
    }
    return 0;
}

static int stub_poll_cq(struct ibv_cq *c, int n, struct ibv_wc *wc) {
    (void) c;
    if (poll_error) {
        return -1;
    }
    int k = 0;
    while (k < n && tail != head) {
        wc[k++] = ring[tail++ % RING];
    }
    return k;
}

static int stub_req_notify_cq(struct ibv_cq *c, int solicited_only) {
    (void) c;
    (void) solicited_only;
    return 0;
}

struct ibv_context *stub_context(void) {
    if (ctx.device == NULL) {
        dev.node_type = IBV_NODE_CA;
        dev.transport_type = IBV_TRANSPORT_IB;
        strcpy(dev.name, "stub0");
        ctx.device = &dev;
        ctx.ops.post_send = stub_post_send;
        ctx.ops.post_recv = stub_post_recv;
        ctx.ops.poll_cq = stub_poll_cq;
        ctx.ops.req_notify_cq = stub_req_notify_cq;
        channel.context = &ctx;
        channel.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        cq.context = &ctx;
        cq.channel = &channel;
        cq.cqe = (int) RING;
        qp.context = &ctx;
        qp.send_cq = &cq;
        qp.recv_cq = &cq;
        qp.qp_num = 0x11;
        qp.qp_type = IBV_QPT_RC;
        qp.state = IBV_QPS_RTS;
    }
    return &ctx;
}

struct ibv_cq *stub_cq(void) { stub_context(); return &cq; }
struct ibv_qp *stub_qp(void) { stub_context(); return &qp; }
struct ibv_comp_channel *stub_channel(void) { stub_context(); return &channel; }

/* Test controls and probes. */
void stub_fail_post_send(int index, int err) { fail_index = index; fail_errno = err; }
void stub_set_poll_error(int on) { poll_error = on; }
void stub_reset(void) { head = tail = 0; sends = recvs = 0; fail_index = -1; poll_error = 0; }
unsigned long stub_sends(void) { return sends; }
unsigned long stub_recvs(void) { return recvs; }
const struct ibv_send_wr *stub_last_wr(void) { return &last_wr; }
const struct ibv_sge *stub_last_sge(void) { return last_sge; }
