package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.NamespaceIdDescriptor;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.UUID;

/** The namespace identifiers of a volume's namespace (Identify Namespace, Namespace Identification Descriptors). */
final class NamespaceIds {
    private NamespaceIds() {
    }

    /**
     * Namespace identifiers of the volume with id {@code volumeId}, the same on every node exporting it (so Linux
     * multipath sees one namespace behind several paths, {@code nvme_init_ns_head}) and distinct between volumes
     * ({@code nvme_global_check_duplicate_ids}): UUID = name-based (RFC 4122 version 3) of
     * {@code "rdmablock:volume:" + volumeId}; NGUID = bytes 0..15 and EUI64 = bytes 16..23 of SHA-256 of the same
     * string; CSI 0 (NVM).
     */
    static NamespaceIdDescriptor.Ids of(String volumeId) {
        byte[] name = ("rdmablock:volume:" + volumeId).getBytes(StandardCharsets.UTF_8);
        byte[] sha;
        try {
            sha = MessageDigest.getInstance("SHA-256").digest(name);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
        UUID u = UUID.nameUUIDFromBytes(name);
        byte[] uuid = new byte[16];
        for (int i = 0; i < 8; i++) {
            uuid[i] = (byte) (u.getMostSignificantBits() >>> (56 - 8 * i));
            uuid[8 + i] = (byte) (u.getLeastSignificantBits() >>> (56 - 8 * i));
        }
        return new NamespaceIdDescriptor.Ids(Arrays.copyOfRange(sha, 16, 24), Arrays.copyOfRange(sha, 0, 16), uuid,
                NamespaceIdDescriptor.CSI_NVM);
    }
}
