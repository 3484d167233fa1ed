/**
 * The NVMe-oF-style target of a storage node (package named after SPDK {@code lib/nvmf}), modelled on SPDK {@code lib/nvmf}: three layers that do not know each
 * other's internals.
 *
 * <ul>
 *   <li>Transport: {@link io.rdmablock.node.nvmf.RdmaQueue} - one RC queue pair, its CQ, the registered RECV capsule
 *       buffers, data buffers and response capsules, and the preallocated {@link io.rdmablock.node.nvmf.Request}s
 *       driven by one state machine. {@link io.rdmablock.node.nvmf.Poller} runs queues to completion on one thread.
 *       {@link io.rdmablock.node.nvmf.Target} listens through the connection manager and checks the queue
 *       handshake (NVMe/RDMA transport 1.0 section 3.2).</li>
 *   <li>Controller: {@link io.rdmablock.node.nvmf.Controller} - Connect, properties, admin commands, keep-alive;
 *       one per host association (admin queue + I/O queues).</li>
 *   <li>Subsystem: {@link io.rdmablock.node.nvmf.Subsystem} - subnqn, namespace 1 = one store volume, allowed
 *       hosts.</li>
 * </ul>
 *
 * <p>The wire protocol is described byte by byte in {@code docs/wire-protocol.md}.
 */
package io.rdmablock.node.nvmf;
