/**
 * NVMe in-band authentication, DH-HMAC-CHAP (NVMe Base 2.0 sections 6.1, 6.2 Authentication Receive / Send and 8.13
 * In-band authentication; NVMe-oF TP 8006), transport independent and shared by host and target: the message layouts
 * ({@link io.rdmablock.rdma.fabric.auth.DhchapMessages}), the DH groups ({@link io.rdmablock.rdma.fabric.auth.DhGroup},
 * RFC 7919 FFDHE), the computations ({@code DhchapCrypto}) and one state machine per side
 * ({@link io.rdmablock.rdma.fabric.auth.DhchapHost}, {@link io.rdmablock.rdma.fabric.auth.DhchapController}). The
 * secret format and the hash identifiers they use ({@link io.rdmablock.nvme.auth.DhchapSecret},
 * {@link io.rdmablock.nvme.auth.DhchapHash}) live in the dependency-free module {@code nvme-auth}, which the
 * management plane uses without this library. Secure channel concatenation (TLS PSK generation) is not
 * implemented: SC_C other than 00h is refused. The reference implementation followed byte for byte is Linux
 * {@code drivers/nvme/common/auth.c}, {@code host/auth.c}, {@code target/fabrics-cmd-auth.c}, {@code target/auth.c}.
 */
package io.rdmablock.rdma.fabric.auth;
