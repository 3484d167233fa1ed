/**
 * Replication on the primary (docs/replication.md): the fan-out of host writes to the copies, the links to the
 * secondaries and the replica set.
 *
 * <p>Owns: {@link io.rdmablock.node.replication.ReplicatedVolumeIo} (a primary's volume I/O: reads local, writes to
 * every copy) and {@link io.rdmablock.node.replication.ReplicatedWrites} (one state machine per replicated write,
 * {@link io.rdmablock.node.replication.Write}, advanced in one {@code advance}); the per-host-queue
 * {@link io.rdmablock.node.replication.CopyQueues} of {@link io.rdmablock.node.replication.ForwardQueue}s; the links
 * ({@link io.rdmablock.node.replication.ForwardLink}, {@link io.rdmablock.node.replication.PeerLink} with its own
 * lease association {@link io.rdmablock.node.replication.LeaseAssociation}); the replica set
 * ({@link io.rdmablock.node.replication.ReplicaSet}: the copies, their states and the published view, and the
 * {@link io.rdmablock.node.replication.ReplicaDropper} that drops and marks copies through the management plane).
 *
 * <p>May import: {@code node.target}'s {@code VolumeIo} (the contract it implements), {@code node.target} (the
 * {@link io.rdmablock.node.target.Request} of the contract), nvmf-host (the host-side queues), rdma-io. Left today (a
 * pure move): {@code node.resync} both ways - the set holds its missed-region bitmaps
 * ({@code resync.MissedBitmaps}, {@code resync.DirtyRegions}), its {@code resync.Resyncs} and the
 * {@code resync.RegionGate} writes pass, and resync reads the set (the "replica set as a view others
 * subscribe to" removes that). Not {@code node.failover}: activation and the peer lease use this package, not the
 * other way round.
 */
package io.rdmablock.node.replication;
