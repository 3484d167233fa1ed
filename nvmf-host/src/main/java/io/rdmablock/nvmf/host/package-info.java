/**
 * The host side of NVMe over Fabrics on RDMA as one queue's mechanics, shared by the initiator (a block device) and
 * a storage node that forwards writes to its peers (replication, docs/replication.md):
 * {@link io.rdmablock.nvmf.host.HostQueue} (the one I/O queue engine: slots, cids, capsules, post, reap, deadlines,
 * fence; owner-driven, the clock passed in),
 * {@link io.rdmablock.nvmf.host.QueueConnection} (CM connect, Fabrics Connect, RECV posting, synchronous commands),
 * {@link io.rdmablock.nvmf.host.QueueMemory} (registered capsules and response buffers),
 * {@link io.rdmablock.nvmf.host.CidAllocator}, {@link io.rdmablock.nvmf.host.CapsuleBuilder},
 * {@link io.rdmablock.nvmf.host.RegisteredBuffers}, {@link io.rdmablock.nvmf.host.AdminCommands},
 * {@link io.rdmablock.nvmf.host.TargetLimits}; and for a node's forwarding path
 * {@link io.rdmablock.nvmf.host.PeerAssociation} (set up on the caller's thread) and
 * {@link io.rdmablock.nvmf.host.PeerQueue} (the engine as a node's forward queue: one connection for life).
 *
 * <p>Not here: block-device policy (namespace choice, reconnect, splitting, threads) stays in the initiator.
 * Sources: NVMe Base 2.0, NVMe over Fabrics 1.1, NVMe/RDMA Transport 1.0, Linux {@code drivers/nvme/host/rdma.c}.
 * Errors: {@link io.rdmablock.nvmf.host.NvmfHostException} and {@link io.rdmablock.nvmf.host.NvmfStatusException}.
 */
package io.rdmablock.nvmf.host;
