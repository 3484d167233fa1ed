/**
 * Bringing copies back in sync, as the management plane records it (docs/resync.md): copy transitions a primary
 * asks for and verify runs ({@link io.rdmablock.mgmt.api.resync.ResyncRecords}), and rebuild and drain
 * ({@link io.rdmablock.mgmt.api.resync.Rebuilds}: replacement copies, and a switchover through {@code failover} when a
 * leaving primary has an in-sync successor).
 *
 * <p>May import: {@code failover}, {@code state}, {@code store}, mgmt-client.
 */
package io.rdmablock.mgmt.api.resync;
