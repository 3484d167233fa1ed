/**
 * Resync, rebuild and verify on the primary (docs/resync.md): bringing a stale or new copy up to date, and checking
 * that the copies agree.
 *
 * <p>Owns: the dirty (missed) regions of a copy ({@link io.rdmablock.node.resync.DirtyRegions}, persisted by
 * {@link io.rdmablock.node.resync.MissedBitmaps}); the region exclusion between live writes and walks
 * ({@link io.rdmablock.node.resync.RegionGate}) and the walk itself ({@link io.rdmablock.node.resync.RegionWalk});
 * one copy's {@link io.rdmablock.node.resync.Resync} (a full one is the rebuild of a new copy), a
 * {@link io.rdmablock.node.resync.Verify} run, and {@link io.rdmablock.node.resync.Resyncs}, which starts and stops
 * them per volume; their association to a copy ({@link io.rdmablock.node.resync.CopyChannel}), the primary's own copy
 * as they read it ({@link io.rdmablock.node.resync.LocalStore}). They take their bandwidth from the node's
 * {@link io.rdmablock.node.qos.BackgroundBudget}.
 *
 * <p>May import: {@code node.replication} (the replica set a resync changes, the links its channels open through),
 * {@code node.qos} (the background budget), nvmf-host, mgmt-client (progress and verify reports), rdma-io. Left today (a pure move): {@code node.replication}
 * imports this package back (see its package-info). Not {@code node.target}, {@code node.failover}.
 */
package io.rdmablock.node.resync;
