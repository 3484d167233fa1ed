/**
 * The NVMe-oF target: transport, controllers and subsystems, with no failover, replication or resync inside.
 * {@link io.rdmablock.node.target.Target} accepts connections (connection manager, pending queues, handshakes off the
 * pollers), {@link io.rdmablock.node.target.FabricQueue} is one queue's request state machine whatever the transport
 * ({@link io.rdmablock.node.target.Request}, advanced only by {@code FabricQueue.advance}: capsule, host data,
 * execution, data and response back) with two transports: {@code RdmaQueue} (RECV, RDMA READ, RDMA WRITE + SEND)
 * and {@code TcpQueue} (NVMe/TCP PDUs on a non-blocking socket, accepted by
 * {@link io.rdmablock.node.target.TcpListener}), {@link io.rdmablock.node.target.Poller} runs queues to
 * completion, {@link io.rdmablock.node.target.TargetController} and {@link io.rdmablock.node.target.Subsystem} hold
 * the Fabrics and admin state (Connect, Identify, log pages, keep-alive, DH-HMAC-CHAP in
 * {@link io.rdmablock.node.target.QueueAuthentication} with its work in {@link io.rdmablock.node.target.DhchapWork}),
 * {@link io.rdmablock.node.target.QueueVolumeIo} gates each I/O command by the subsystem's role and hands it to the
 * queue's volume I/O. Its tunables are {@link io.rdmablock.node.target.TargetTuning} (read once by
 * {@code io.rdmablock.node.NodeConfiguration}).
 *
 * <p>Sources: NVMe over Fabrics 1.1 (capsules, Connect, keyed SGL), NVMe Base 2.0 (admin and I/O commands, ANA),
 * NVMe/TCP Transport Specification 1.0, Linux {@code drivers/nvme/target} (nvmet-rdma, nvmet-tcp) as the reference
 * target.
 *
 * <p>May import: {@code node.failover} (the role, gate and lease grants a
 * subsystem publishes, and the secondary's epoch-fenced volume I/O it opens: a cycle left by the move),
 * {@code node.store}, {@code node.metrics}, rdma-io, nvme-auth. Nothing of {@code node.replication} or
 * {@code node.resync}; never the root package {@code io.rdmablock.node}.
 */
package io.rdmablock.node.target;
