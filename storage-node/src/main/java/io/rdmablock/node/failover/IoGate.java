package io.rdmablock.node.failover;

/**
 * The I/O gate of one moment (immutable): {@code role}; {@code status} the NVMe status host I/O gets (0 = served;
 * SCT 3h SC 02h on a secondary, SC 03h while activating); {@code leased}: a primary whose lease end
 * ({@link io.rdmablock.node.target.Subsystem#leaseDeadlineNanos}) must also be checked per command.
 */
public record IoGate(ExportRole role, int status, boolean leased) {
}
