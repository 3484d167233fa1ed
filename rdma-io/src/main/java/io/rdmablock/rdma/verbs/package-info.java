/**
 * The verbs API: a Java rendering of libibverbs and librdmacm, provider-independent.
 *
 * <p>Objects map 1:1 to their ibverbs/rdma_cm counterparts and keep their names:
 * {@link io.rdmablock.rdma.verbs.VerbsProvider} (a provider library), {@link io.rdmablock.rdma.verbs.DeviceContext}
 * ({@code ibv_context}), {@link io.rdmablock.rdma.verbs.ProtectionDomain} ({@code ibv_pd}),
 * {@link io.rdmablock.rdma.verbs.MemoryRegion} ({@code ibv_mr}), {@link io.rdmablock.rdma.verbs.CompletionQueue}
 * ({@code ibv_cq} with its completion channel), {@link io.rdmablock.rdma.verbs.QueuePair} (an RC {@code ibv_qp}),
 * {@link io.rdmablock.rdma.verbs.SendWr}/{@link io.rdmablock.rdma.verbs.RecvWr} ({@code ibv_send_wr}/{@code ibv_recv_wr}),
 * {@link io.rdmablock.rdma.verbs.WorkCompletion} ({@code ibv_wc}), {@link io.rdmablock.rdma.verbs.CmId}
 * ({@code rdma_cm_id}) and {@link io.rdmablock.rdma.verbs.CmListener} (a listening {@code rdma_cm_id}).
 *
 * <p>Semantics follow ibv_post_send(3), ibv_post_recv(3), ibv_poll_cq(3), ibv_reg_mr(3), rdma_cm(7),
 * rdma_connect(3), rdma_accept(3) and the InfiniBand Architecture Specification Vol. 1 (RC service, chapter 9/10/11).
 * Every blocking call takes a timeout; none can hang forever.
 *
 * <p>Providers: {@code soft} (user space over TCP, {@code io.rdmablock.rdma.verbs.soft}) and {@code ffm}
 * ({@code java.lang.foreign} over libibverbs/librdmacm, {@code io.rdmablock.rdma.verbs.ffm}); pick one with
 * {@link io.rdmablock.rdma.verbs.Providers#select(String)}.
 */
package io.rdmablock.rdma.verbs;
