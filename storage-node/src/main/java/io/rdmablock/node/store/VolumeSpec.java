package io.rdmablock.node.store;

import java.util.Set;
import java.util.regex.Pattern;

/**
 * What to create: a volume of {@code sizeBytes} with logical blocks of {@code lbaSizeBytes}.
 *
 * @param id           stable identifier, 1-64 characters of {@code [A-Za-z0-9._-]}, starting with a letter or digit;
 *                     also the data file name ({@code <id>.vol})
 * @param name         human-readable name, 1-255 characters
 * @param sizeBytes    capacity in bytes, a positive multiple of {@code lbaSizeBytes}, at most {@link #MAX_SIZE_BYTES}
 * @param lbaSizeBytes logical block size in bytes: 512 or 4096
 * @param allowedHosts hostnqns allowed to connect (each at most 223 bytes, NVMe Base Spec 4.5 NQN); the entry
 *                     {@code "*"} allows any host; an empty set allows none
 * @throws IllegalArgumentException naming the field and its bounds when a value is invalid
 */
public record VolumeSpec(String id, String name, long sizeBytes, int lbaSizeBytes, Set<String> allowedHosts) {

    /** Largest volume: 2^50 bytes (1 PiB). */
    public static final long MAX_SIZE_BYTES = 1L << 50;
    /** Longest NQN in bytes (NVMe Base Spec, NVMe Qualified Names). */
    public static final int MAX_NQN_BYTES = 223;
    /** Allow-list entry that admits any hostnqn. */
    public static final String ANY_HOST = "*";

    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    public VolumeSpec {
        validateId(id);
        if (name == null || name.isEmpty() || name.length() > 255) {
            throw new IllegalArgumentException("invalid name: length=" + (name == null ? "null" : name.length())
                    + ", min=1, max=255");
        }
        validateLbaSize(lbaSizeBytes);
        validateSize("sizeBytes", sizeBytes, lbaSizeBytes);
        allowedHosts = validateHosts(allowedHosts);
    }

    static void validateId(String id) {
        if (id == null || !ID.matcher(id).matches()) {
            throw new IllegalArgumentException("invalid id: id=" + id
                    + ", expected 1-64 characters of [A-Za-z0-9._-] starting with a letter or digit");
        }
    }

    static void validateLbaSize(int lbaSizeBytes) {
        if (lbaSizeBytes != 512 && lbaSizeBytes != 4096) {
            throw new IllegalArgumentException("invalid lbaSizeBytes: lbaSizeBytes=" + lbaSizeBytes
                    + ", allowed=512|4096");
        }
    }

    static void validateSize(String field, long sizeBytes, int lbaSizeBytes) {
        if (sizeBytes <= 0 || sizeBytes > MAX_SIZE_BYTES || sizeBytes % lbaSizeBytes != 0) {
            throw new IllegalArgumentException("invalid " + field + ": " + field + "=" + sizeBytes
                    + ", min=" + lbaSizeBytes + ", max=" + MAX_SIZE_BYTES + ", multipleOf=" + lbaSizeBytes);
        }
    }

    static Set<String> validateHosts(Set<String> hosts) {
        if (hosts == null) {
            return Set.of();
        }
        for (String h : hosts) {
            if (h == null || h.isEmpty() || h.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_NQN_BYTES) {
                throw new IllegalArgumentException("invalid allowedHosts entry: hostnqn=" + h
                        + ", minBytes=1, maxBytes=" + MAX_NQN_BYTES);
            }
        }
        return Set.copyOf(hosts);
    }
}
