/**
 * The management server: a Vert.x 5 verticle ({@link io.rdmablock.mgmt.api.MgmtVerticle}) whose router is built
 * from the OpenAPI 3 contract {@code openapi.yaml} (served at {@code /openapi.yaml}, used to validate every
 * request), the cluster logic ({@link io.rdmablock.mgmt.api.ClusterService}: placement, reconciliation with
 * node heartbeats) over a {@link io.rdmablock.mgmt.api.store.MetadataStore}, bearer-token auth on mutating
 * routes, problem+json errors, {@code /metrics} (Prometheus) and {@code /health}.
 * {@link io.rdmablock.mgmt.api.MgmtServer} starts the whole thing.
 */
package io.rdmablock.mgmt.api;
