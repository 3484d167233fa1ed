/**
 * The storage node process: {@link io.rdmablock.node.StorageNode} composes the volume store, the fabric target, the
 * metrics endpoint and the management-plane agent; {@link io.rdmablock.node.NodeCommand} is its command line and
 * {@link io.rdmablock.node.NodeMain} its entry point.
 */
package io.rdmablock.node;
