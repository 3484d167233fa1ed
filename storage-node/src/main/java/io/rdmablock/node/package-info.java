/**
 * The storage node process: {@link io.rdmablock.node.StorageNode} composes the volume store, the fabric target, the
 * metrics endpoint and the management-plane agent ({@link io.rdmablock.node.MgmtSync}, which puts each volume's
 * subsystem in the mode its copy's role says through {@link io.rdmablock.node.Replication}, wiring replica sets,
 * activations, peer leases and resyncs); {@link io.rdmablock.node.NodeCommand} is its command line,
 * {@link io.rdmablock.node.NodeConfig} its settings, {@link io.rdmablock.node.NodeConfiguration} its {@code -D}
 * system-property knobs (each named, defaulted and checked once at start, then handed to the parts below at their
 * construction: no other class reads a system property; docs/configuration.md) and {@link io.rdmablock.node.NodeMain}
 * its entry point.
 *
 * <p>The packages below it, by concern: {@code target} (transport, controller, subsystem), {@code io} (volume I/O),
 * {@code replication} (fan-out, links, the replica set), {@code failover} (epoch fence, leases, activation, the
 * exported role and its gate), {@code resync} (resync, rebuild, dirty regions, verify), {@code store} (the volume
 * store) and {@code metrics}. Each says in its package-info what it may import.
 *
 * <p>May import: every package of the node (this is the composition root). Imported by none of them.
 */
package io.rdmablock.node;
