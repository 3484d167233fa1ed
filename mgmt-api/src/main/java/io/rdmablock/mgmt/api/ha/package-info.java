/**
 * High availability of the management plane: {@link io.rdmablock.mgmt.api.ha.Leadership}, the election of one
 * management leader among servers that share their metadata in etcd (etcd's election and lease APIs; no home-made
 * consensus). Not yet consulted by the cluster service.
 */
package io.rdmablock.mgmt.api.ha;
