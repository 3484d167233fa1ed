package io.rdmablock.node.store;

import java.util.Set;

/**
 * A snapshot of one row of the volume table.
 *
 * @param id             volume id (see {@link VolumeSpec#id()})
 * @param name           human-readable name
 * @param sizeBytes      current capacity in bytes (a multiple of {@code lbaSizeBytes})
 * @param lbaSizeBytes   logical block size: 512 or 4096
 * @param state          lifecycle state
 * @param allowedHosts   hostnqn allow-list ({@link VolumeSpec#ANY_HOST} admits any host)
 * @param allocatedBytes bytes of 1 MiB allocation chunks written at least once (thin provisioning), at most
 *                       {@code sizeBytes}
 */
public record VolumeInfo(String id, String name, long sizeBytes, int lbaSizeBytes, StoreVolumeState state,
                         Set<String> allowedHosts, long allocatedBytes) {
}
