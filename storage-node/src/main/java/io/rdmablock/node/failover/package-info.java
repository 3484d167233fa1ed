/**
 * Failover on the node (docs/failover.md): who may serve a volume's I/O, and when.
 *
 * <p>Owns: the role a subsystem exports under and its I/O gate ({@link io.rdmablock.node.failover.ExportRole},
 * {@link io.rdmablock.node.failover.IoGate}, immutable, published by the subsystem as one value) and the ANA state
 * hosts see ({@link io.rdmablock.node.failover.AnaState}); the secondary's epoch fence
 * ({@link io.rdmablock.node.failover.EpochFencedVolumeIo} over {@code store.EpochFence}); the peer lease, granted
 * ({@link io.rdmablock.node.failover.PeerLeaseGrants}, a secondary) and held
 * ({@link io.rdmablock.node.failover.PeerLease}, a primary); a new primary's
 * {@link io.rdmablock.node.failover.Activation} (epoch to every in-sync copy, then the wait out of the old lease);
 * a secondary's watch of its primary ({@link io.rdmablock.node.failover.PrimaryWatch}).
 *
 * <p>May import: {@code node.target} (the {@code VolumeIo} contract the fence implements and wraps), {@code node.replication} (activation and
 * the peer lease act on a {@code ReplicaSet}), {@code node.store}, mgmt-client (the heartbeat records), rdma-io.
 * Left today (a pure move): {@code node.target} both ways - the subsystem holds the role, gate and grants, and
 * {@code ExportRole} names {@code Subsystem.Mode}, the fence takes a {@code Request}. Not {@code node.resync}.
 */
package io.rdmablock.node.failover;
