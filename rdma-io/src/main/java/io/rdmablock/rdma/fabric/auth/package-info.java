/**
 * NVMe in-band authentication, DH-HMAC-CHAP (NVMe Base 2.0 sections 6.1, 6.2 Authentication Receive / Send and 8.13
 * In-band authentication; NVMe-oF TP 8006), transport independent and shared by host and target: the secret format
 * ({@link io.rdmablock.rdma.fabric.auth.DhchapSecret}, nvme-cli {@code gen-dhchap-key}), the message layouts
 * ({@link io.rdmablock.rdma.fabric.auth.DhchapMessages}), the hash and group identifiers
 * ({@link io.rdmablock.rdma.fabric.auth.DhchapHash}, {@link io.rdmablock.rdma.fabric.auth.DhGroup}, RFC 7919 FFDHE),
 * and one state machine per side ({@link io.rdmablock.rdma.fabric.auth.DhchapHost},
 * {@link io.rdmablock.rdma.fabric.auth.DhchapController}). Secure channel concatenation (TLS PSK generation) is not
 * implemented: SC_C other than 00h is refused. The reference implementation followed byte for byte is Linux
 * {@code drivers/nvme/common/auth.c}, {@code host/auth.c}, {@code target/fabrics-cmd-auth.c}, {@code target/auth.c}.
 */
package io.rdmablock.rdma.fabric.auth;
