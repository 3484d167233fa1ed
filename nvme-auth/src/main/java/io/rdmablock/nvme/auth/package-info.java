/**
 * What every side needs of NVMe in-band authentication without its protocol engine: the DH-HMAC-CHAP secret format
 * ({@link io.rdmablock.nvme.auth.DhchapSecret}, nvme-cli {@code gen-dhchap-key}, NVMe Base 2.0 section 8.13.5.8),
 * the hash identifiers ({@link io.rdmablock.nvme.auth.DhchapHash}) and the derivation of node-to-node link secrets
 * from a node key ({@link io.rdmablock.nvme.auth.NodeLinkKeys}). Pure JDK (JCA), no dependency: the management plane
 * (mgmt-api, the CLI) validates and makes secrets with it, and {@code rdma-io}'s DH-HMAC-CHAP state machines
 * ({@code io.rdmablock.rdma.fabric.auth}) authenticate with them.
 *
 * <p>May import: the JDK only.
 */
package io.rdmablock.nvme.auth;
