/**
 * Failover of a volume's primary as the management plane decides it (docs/failover.md "Promotion"; docs/resync.md
 * "Lease on a switchover"): {@link io.rdmablock.mgmt.api.failover.Promotions} takes unreachable reports, promotes
 * automatically from the liveness sweep or on the operator's request, carries out switchovers, raises the epoch by
 * one compare-and-set per change of primary, and answers the lease a new primary must still wait out.
 *
 * <p>May import: {@code state}, {@code store}, mgmt-client.
 */
package io.rdmablock.mgmt.api.failover;
