/**
 * The {@code soft} verbs provider: RC queue pairs, memory regions and completion queues implemented in user space
 * over TCP, in the spirit of SoftiWARP ({@code drivers/infiniband/sw/siw}) and Soft-RoCE ({@code sw/rxe}). One device,
 * {@code soft0} ({@link io.rdmablock.rdma.verbs.DeviceContext.Transport#SOFT}).
 *
 * <h2>Structure</h2>
 * This package is the TCP transport of the emulated-provider engine ({@link io.rdmablock.rdma.verbs.emu}, shared with
 * the {@code memory} provider): the queue pair's rings, post-time checks and completions
 * ({@link io.rdmablock.rdma.verbs.emu.EmuQp}), the completion queue, the connection-manager id's state and the
 * memory regions are there; here are the engine that moves the queue pairs' work over a socket, the handshake and
 * the listener. One TCP connection per queue pair; the connection-manager handshake ({@link io.rdmablock.rdma.verbs.soft.CmWire}:
 * request with up to 56 bytes of private data, accept or reject with private data, ready-to-use) runs on that socket
 * before any queue-pair frame. Each queue pair has one engine ({@link io.rdmablock.rdma.verbs.soft.QpEngine}) that
 * owns the socket and all transport state: its {@link io.rdmablock.rdma.verbs.soft.Transmitter} sends posted work
 * requests with gathering writes straight from registered memory (several frames per write), its
 * {@link io.rdmablock.rdma.verbs.soft.Receiver} serves the peer's requests and reads the socket through a 64 KiB
 * stage, so the frames that travel together (ACKs, capsules and their SQEs, responses, payloads of up to 16 KiB) cost
 * one read for many and are copied into registered memory; while more than 16 KiB of a payload are still to come they
 * are read with a scattering read straight into registered memory. Frame layout: {@link io.rdmablock.rdma.verbs.soft.FrameDescriptor}. The engine
 * runs on the application's own threads, as a NIC is driven by its host: a post sends (at once, or with the poster's
 * next poll: one system call for a round of posts), a poll of a completion queue steps its queue pairs, a wait on a
 * completion queue of one queue pair blocks in that queue pair's selector, so a completion is seen without a thread
 * hand-off. Each queue pair also has an engine thread that runs it when no application thread has polled for
 * {@code rdmablock.soft.inlineGraceNs} (1 ms; a responder serves RDMA READ/WRITE whether or not its application
 * polls), in ERROR and on teardown. One thread at a time runs an engine (a try-lock, never waited on). The post and
 * poll paths allocate nothing of their own and never block.
 *
 * <h2>Semantics (as on an RC queue pair, IBTA Vol. 1 ch. 9-11, ibv_post_send(3))</h2>
 * <ul>
 *   <li>RDMA READ/WRITE are served by the remote engine, never the remote application, after checking rkey, protection
 *   domain, bounds and access flags; nothing is placed before the check passes. A violation completes REM_ACCESS_ERR
 *   at the requester; both queue pairs go to ERROR.</li>
 *   <li>SEND consumes the next posted RECV; longer than it: LOC_LEN_ERR at the responder, REM_INV_REQ_ERR at the
 *   requester. No RECV: RNR NAK; the requester waits {@link io.rdmablock.rdma.verbs.soft.QpEngine#RNR_DELAY_NS} and
 *   retransmits from that request (go-back-N), {@code rnrRetryCount} times (7 = forever), then RNR_RETRY_EXC_ERR.
 *   RDMA_WRITE_WITH_IMM consumes a RECV too (RECV_RDMA_WITH_IMM).</li>
 *   <li>Requests execute in order; send completions are generated in posting order (a READ when its data is placed,
 *   others when acknowledged); an unsignaled WR's slot is released by the next signaled completion.</li>
 *   <li>Local errors (bad lkey, bounds, missing LOCAL_WRITE on a RECV or READ sink) complete LOC_PROT_ERR in order.
 *   Any error moves the queue pair to ERROR and flushes every outstanding WR with WR_FLUSH_ERR; WRs posted in ERROR
 *   complete with WR_FLUSH_ERR.</li>
 *   <li>CQ overrun puts the CQ in error ({@code CqOverrunException}) and moves every attached queue pair to ERROR.</li>
 * </ul>
 *
 * <h2>Deliberate differences from hardware</h2>
 * <ul>
 *   <li>A queue pair in ERROR tears its connection down (as siw does after a TERMINATE): the peer's queue pair goes to
 *   ERROR and flushes, and both ids report DISCONNECTED. On IB/RoCE the peer would instead time out
 *   (RETRY_EXC_ERR) on its next request, or learn it from the CM.</li>
 *   <li>lkey and rkey of a region differ, so using one for the other fails (rxe uses the same value for both). Both
 *   are random 32-bit values ({@link io.rdmablock.rdma.verbs.emu.EmuDevice}): no key follows from another.</li>
 *   <li>Connecting to a port without listener fails UNREACHABLE (ECONNREFUSED), as on iWARP; IB/RoCE report
 *   REJECTED.</li>
 *   <li>Segments of a thread-confined arena cannot be registered: the engines access registered memory from any
 *   polling thread and their own. Register memory of a shared, automatic or global arena.</li>
 *   <li>There are no transport retries ({@code retryCount} is accepted and ignored): TCP is reliable.</li>
 *   <li>Cost per operation: the JDK's vectored socket I/O on a segment-backed buffer allocates about 40 bytes per
 *   buffer per call ({@code sun.nio.ch.IOUtil}); the provider's own buffers are session-less and cost nothing.</li>
 * </ul>
 */
package io.rdmablock.rdma.verbs.soft;
