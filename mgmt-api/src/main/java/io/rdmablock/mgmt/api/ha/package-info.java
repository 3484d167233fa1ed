/**
 * High availability of the management plane: {@link io.rdmablock.mgmt.api.ha.Leadership}, the election of one
 * management leader among servers that share their metadata in etcd (etcd's election and lease APIs; no home-made
 * consensus), and what only the leader may do: {@code LeaderOnlyStore} refuses writes on a follower,
 * {@code LeaderView} tells the HTTP layer whether this server leads (a follower answers writes 307).
 *
 * <p>May import: {@code store}, jetcd. Nothing else of this module.
 */
package io.rdmablock.mgmt.api.ha;
