/*
 * The C side of the ffm hot-path benchmark: post one signaled SEND + poll its completion, through the ops table of
 * the stub context (ibv_post_send/ibv_poll_cq are the static inlines of verbs.h), filling the WR each iteration as
 * the Java side does. Prints "c_ns_per_op <value>".   Usage: bench_c <iterations> <rounds>
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <infiniband/verbs.h>

struct ibv_context *stub_context(void);
struct ibv_cq *stub_cq(void);
struct ibv_qp *stub_qp(void);

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: preemption by other load excluded */
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 10000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    struct ibv_qp *qp = stub_qp();
    struct ibv_cq *cq = stub_cq();
    static char buf[4096];
    volatile unsigned long sink = 0;
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            struct ibv_sge sge = {.addr = (uintptr_t) buf, .length = 64, .lkey = 0x1234};
            struct ibv_send_wr wr = {0}, *bad;
            wr.wr_id = (uint64_t) i;
            wr.sg_list = &sge;
            wr.num_sge = 1;
            wr.opcode = IBV_WR_SEND;
            wr.send_flags = IBV_SEND_SIGNALED;
            if (ibv_post_send(qp, &wr, &bad)) {
                fprintf(stderr, "post failed\n");
                return 1;
            }
            struct ibv_wc wc[16];
            int n = ibv_poll_cq(cq, 16, wc);
            for (int k = 0; k < n; k++) {
                sink += wc[k].wr_id + wc[k].status + wc[k].opcode + wc[k].byte_len + wc[k].qp_num
                        + wc[k].wc_flags + wc[k].vendor_err;
            }
        }
        double ns = (now_ns() - t0) / iters;
        printf("c round %d: %.1f ns/op\n", r, ns);
        if (ns < best) {
            best = ns;
        }
    }
    printf("c_ns_per_op %.2f\n", best);
    return sink == 42 ? 2 : 0;
}
