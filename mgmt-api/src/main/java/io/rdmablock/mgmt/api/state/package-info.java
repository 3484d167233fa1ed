/**
 * What the cluster, failover and resync logic share: {@link io.rdmablock.mgmt.api.state.ClusterState}, the runtime
 * state beside the metadata store (liveness, lease and heartbeat times on the monotonic clock, replacement copies,
 * placement inputs, the compare-and-set helpers), and {@link io.rdmablock.mgmt.api.state.ApiException}, the error
 * answer every layer throws and the HTTP layer turns into problem+json. Its own package so that {@code failover} and
 * {@code resync} need not import {@code cluster}, which imports them.
 *
 * <p>May import: {@code store}, mgmt-client. Nothing else of this module.
 */
package io.rdmablock.mgmt.api.state;
