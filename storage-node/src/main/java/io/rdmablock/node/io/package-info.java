/**
 * The node's own copy of a volume as an I/O queue's volume I/O: {@link io.rdmablock.node.io.LocalVolumeIo}, one store
 * queue per I/O queue, implementing the target's contract {@link io.rdmablock.node.target.VolumeIo} (start a command,
 * poll its completions with the round's clock, drain, close; opened at Connect from the subsystem's
 * {@link io.rdmablock.node.target.VolumeIo.Factory}). The node wires it into the target ({@code LocalVolumeIo::open});
 * the other implementations live with their concern: the secondary's epoch-fenced one in {@code node.failover}, the
 * replicated primary's in {@code node.replication}.
 *
 * <p>May import: {@code node.store}, rdma-io ({@code rdma.verbs}, {@code rdma.fabric}), and of {@code node.target}
 * the contract ({@link io.rdmablock.node.target.VolumeIo}) and the command a queue hands over
 * ({@link io.rdmablock.node.target.Request}). The target does not import this package (no cycle). Nothing of
 * {@code replication}, {@code failover}, {@code resync}.
 */
package io.rdmablock.node.io;
