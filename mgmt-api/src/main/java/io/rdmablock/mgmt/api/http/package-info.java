/**
 * The REST surface of the management server: {@link io.rdmablock.mgmt.api.http.MgmtVerticle} builds the router
 * from the OpenAPI 3 contract {@code openapi.yaml} (served at {@code /openapi.yaml}, used to validate every request;
 * {@code ContractLoader}), checks bearer tokens ({@code BearerAuth}), strict JSON and validation wording
 * ({@code StrictJson}, {@code ValidationProblems}), answers errors as problem+json ({@code Problems},
 * {@code HttpFaults}), hosts the route handlers of volumes, nodes, hosts and host credentials ({@code *Routes}),
 * the dashboard under {@code /ui/} ({@code Dashboard}), {@code /metrics} and {@code /health}, and decides whether
 * secrets may travel on a connection ({@code SecretChannel}). How it listens: {@link
 * io.rdmablock.mgmt.api.http.MgmtHttpOptions}. Owns the classpath resources {@code io/rdmablock/mgmt/api/http/}
 * ({@code openapi.yaml}, {@code ui/}). Handlers only translate: every decision about the cluster is
 * {@code cluster}'s.
 *
 * <p>May import: {@code cluster}, {@code metrics}, {@code state} (ApiException), {@code store} (records and
 * exceptions), {@code ha}, mgmt-client, Vert.x. Not imported by any other package of the module except the root.
 */
package io.rdmablock.mgmt.api.http;
