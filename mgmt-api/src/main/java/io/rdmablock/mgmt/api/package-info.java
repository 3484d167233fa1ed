/**
 * The management server: {@link io.rdmablock.mgmt.api.MgmtServer} assembles one running
 * server (its Vert.x instance, the metadata store, the cluster service and the HTTP verticle) and closes them in
 * reverse order. Everything else lives in the packages below, which never import this one:
 * <ul>
 *   <li>{@code http}: the REST surface (routes from the OpenAPI contract, auth, problem+json, dashboard);</li>
 *   <li>{@code cluster}: volumes, nodes, hosts and credentials, placement and heartbeats ({@code ClusterService});</li>
 *   <li>{@code failover}: promotion, epochs, primary leases; {@code resync}: copy transitions, verify, rebuild and
 *       drain;</li>
 *   <li>{@code state}: the runtime state beside the store that cluster, failover and resync share;</li>
 *   <li>{@code metrics}: Prometheus metrics of the server and the nodes' per-volume rates;</li>
 *   <li>{@code store}: the metadata store (RocksDB, etcd, in memory); {@code ha}: leader election on etcd.</li>
 * </ul>
 * Import arrows run one way: http -&gt; metrics -&gt; cluster -&gt; resync -&gt; failover -&gt; state -&gt; store
 * (each may also import those further right; ha -&gt; store).
 *
 * <p>May import: every package of this module, mgmt-client.
 */
package io.rdmablock.mgmt.api;
