/**
 * The NVMe-oF-style target of a storage node (package named after SPDK {@code lib/nvmf}), modelled on SPDK
 * {@code lib/nvmf}: layers that do not know each other's internals.
 *
 * <ul>
 *   <li>Transport: {@link io.rdmablock.node.nvmf.RdmaQueue} - one RC queue pair, its CQ, the registered RECV capsule
 *       buffers, data buffers and response capsules ({@link io.rdmablock.node.nvmf.TargetQueueMemory}, in the
 *       device's protection domain), and the preallocated {@link io.rdmablock.node.nvmf.Request}s driven by one state
 *       machine ({@code RdmaQueue.advance}, the only writer of a request's state; handlers return an
 *       {@link io.rdmablock.node.nvmf.Outcome}); its teardown is {@link io.rdmablock.node.nvmf.QueueTeardown}, its
 *       volume I/O and ANA gate {@link io.rdmablock.node.nvmf.QueueVolumeIo}.
 *       {@link io.rdmablock.node.nvmf.Poller} runs queues (and
 *       {@link io.rdmablock.node.nvmf.Poller.Pollable}s) to completion on one thread.
 *       {@link io.rdmablock.node.nvmf.Target} listens through the connection manager and checks the queue
 *       handshake (NVMe/RDMA transport 1.0 section 3.2).</li>
 *   <li>Controller: {@link io.rdmablock.node.nvmf.TargetController} - properties, admin commands, keep-alive; one
 *       per host association (admin queue + I/O queues). {@link io.rdmablock.node.nvmf.Connect} (Fabrics Connect) and
 *       {@link io.rdmablock.node.nvmf.AssociationFence} (a new association waits for the host's old one to drain)
 *       beside it; {@link io.rdmablock.node.nvmf.Commands} only dispatches and checks data descriptors.</li>
 *   <li>Subsystem: {@link io.rdmablock.node.nvmf.Subsystem} - subnqn, namespace 1 = one store volume, allowed
 *       hosts, replication mode (plain, primary, secondary).</li>
 *   <li>Volume I/O: {@link io.rdmablock.node.nvmf.VolumeIo} - the store handle of one I/O queue, from the
 *       subsystem's factory: {@link io.rdmablock.node.nvmf.LocalVolumeIo} (the node's copy), the secondary's
 *       {@link io.rdmablock.node.nvmf.EpochFencedVolumeIo}, or a replicated primary's.</li>
 * </ul>
 *
 * <p>The wire protocol is described byte by byte in {@code docs/wire-protocol.md}; replication in
 * {@code docs/replication.md}.
 */
package io.rdmablock.node.nvmf;
