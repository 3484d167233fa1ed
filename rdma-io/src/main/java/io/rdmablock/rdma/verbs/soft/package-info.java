/**
 * The {@code soft} verbs provider: RC queue pairs, memory regions and completion queues implemented in user space
 * over TCP, in the spirit of SoftiWARP ({@code drivers/infiniband/sw/siw}) and Soft-RoCE ({@code sw/rxe}).
 *
 * <p>One TCP connection per queue pair; the connection-manager handshake ({@link io.rdmablock.rdma.verbs.soft.CmWire})
 * runs on that socket before any queue-pair traffic. Each queue pair has one engine thread
 * ({@link io.rdmablock.rdma.verbs.soft.QpEngine}) that owns the socket: it transmits posted work requests (gathering
 * writes straight from registered memory), serves the peer's RDMA READ/WRITE against registered memory after checking
 * rkey, bounds and access flags, places SEND payloads straight into posted receive buffers (scattering reads),
 * generates completions in order and flushes on error. The frame layout is in
 * {@link io.rdmablock.rdma.verbs.soft.FrameDescriptor}.
 *
 * <p>Application threads only write preallocated rings (send queue, receive queue) and read the completion ring; the
 * post and poll paths allocate nothing and take no lock.
 */
package io.rdmablock.rdma.verbs.soft;
