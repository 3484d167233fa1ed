/**
 * Cluster metadata: the {@link io.rdmablock.mgmt.api.store.MetadataStore} interface, its embedded RocksDB
 * default and an in-memory variant for tests. A store on an existing consensus system (etcd) implements the
 * same interface ({@link io.rdmablock.mgmt.api.store.EtcdMetadataStore}); the management plane never grows a
 * home-made consensus.
 *
 * <p>May import: mgmt-client (the shared model's enums, Json), RocksDB, jetcd. Nothing else of this module.
 */
package io.rdmablock.mgmt.api.store;
