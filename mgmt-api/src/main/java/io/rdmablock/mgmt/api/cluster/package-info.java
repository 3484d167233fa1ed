/**
 * The cluster logic behind the REST surface: {@link io.rdmablock.mgmt.api.cluster.ClusterService} (volume lifecycle,
 * placement, the liveness sweep, and the one entry point the HTTP layer calls), node registration, drain, keys and
 * heartbeat reconciliation ({@code NodeRegistry}, {@code NodeKeys}, {@code Heartbeats}), managed host secrets
 * ({@code ManagedHosts}), per-volume settings ({@code VolumeSettings}) and who may act: node and host credentials
 * ({@code NodeCredentials}, {@code HostCredentials}, {@code HostCredentialRegistry}). Failover and resync decisions are
 * delegated to {@code failover} and {@code resync}, which this package wires.
 *
 * <p>May import: {@code failover}, {@code resync}, {@code state}, {@code store}, {@code ha}, mgmt-client, nvme-auth.
 * Never {@code http} or {@code metrics} (they import this package).
 */
package io.rdmablock.mgmt.api.cluster;
