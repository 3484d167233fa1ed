/**
 * Volume I/O: how one I/O queue's store commands reach a volume. {@link io.rdmablock.node.io.VolumeIo} is the store
 * handle of one I/O queue (start a command, poll its completions with the round's clock, drain, close), opened at
 * Connect from its subsystem's {@link io.rdmablock.node.io.VolumeIo.Factory}; {@link io.rdmablock.node.io.LocalVolumeIo}
 * is the node's own copy (one store queue). The other implementations live with their concern: the secondary's
 * epoch-fenced one in {@code node.failover}, the replicated primary's in {@code node.replication}.
 *
 * <p>May import: {@code node.store}, rdma-io ({@code rdma.verbs}, {@code rdma.fabric}), and of {@code node.target}
 * the command a queue hands over ({@link io.rdmablock.node.target.Request}) and the
 * {@link io.rdmablock.node.target.Poller} serving the queue, which a volume I/O may add pollables to (a cycle left by the move: the target imports this package for
 * the contract). Nothing of {@code replication}, {@code failover}, {@code resync}.
 */
package io.rdmablock.node.io;
