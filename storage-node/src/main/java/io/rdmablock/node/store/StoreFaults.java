package io.rdmablock.node.store;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Fault injection for tests and fault drills (case C7): a stall rule that holds matching READ/WRITE commands for
 * {@code delayNs} before they reach the backend, as a hung disk would. Installed with
 * {@link VolumeStore#setFaults} or the system property {@value #PROPERTY}, read once by the node's configuration and installed
 * when the node opens its store; it
 * applies to queues created afterwards ({@link VolumeStore#newQueue}). Without a rule, queues are the backend's own
 * (no cost on the normal path).
 *
 * <p>A command matches when it targets volume {@code volumeId} and its byte range
 * {@code [offsetBytes, offsetBytes + lengthBytes)} contains {@code offsetBytes} of the rule; the first
 * {@code count} matching commands (over every queue of the store) are held. A held command still counts as in
 * flight; when it is released it is submitted as issued (on a volume deleted meanwhile it completes with
 * {@code -ENXIO}).
 *
 * <p>Property format: {@code stall:<volumeId>:<offsetBytes>:<delayMs>[:<count>]} (count defaults to 1), e.g.
 * {@code stall:vol1:0:10000}.
 */
public final class StoreFaults {

    /** System property holding a rule ({@code io.rdmablock.node.NodeConfiguration#STORE_FAULTS}). */
    public static final String PROPERTY = "rdmablock.store.faults";

    private final String volumeId;
    private final long offsetBytes;
    private final long delayNs;
    private final AtomicInteger remaining;

    private StoreFaults(String volumeId, long offsetBytes, long delayNs, int count) {
        if (volumeId == null || volumeId.isEmpty()) {
            throw new IllegalArgumentException("invalid volumeId: volumeId=" + volumeId + " (must not be empty)");
        }
        if (offsetBytes < 0) {
            throw new IllegalArgumentException("invalid offsetBytes: offsetBytes=" + offsetBytes + ", min=0");
        }
        if (delayNs < 0 || delayNs > 3_600_000_000_000L) {
            throw new IllegalArgumentException("invalid delayNs: delayNs=" + delayNs + ", min=0, max=3600000000000");
        }
        if (count < 1) {
            throw new IllegalArgumentException("invalid count: count=" + count + ", min=1");
        }
        this.volumeId = volumeId;
        this.offsetBytes = offsetBytes;
        this.delayNs = delayNs;
        this.remaining = new AtomicInteger(count);
    }

    /** Holds the first {@code count} READ/WRITE commands on {@code volumeId} covering {@code offsetBytes}. */
    public static StoreFaults stall(String volumeId, long offsetBytes, long delayNs, int count) {
        return new StoreFaults(volumeId, offsetBytes, delayNs, count);
    }

    /**
     * Parses {@code stall:<volumeId>:<offsetBytes>:<delayMs>[:<count>]}; null or blank gives null (no faults).
     *
     * @throws IllegalArgumentException on any other text
     */
    public static StoreFaults parse(String spec) {
        if (spec == null || spec.isBlank()) {
            return null;
        }
        String[] p = spec.trim().split(":");
        if ((p.length != 4 && p.length != 5) || !p[0].equals("stall")) {
            throw new IllegalArgumentException("invalid " + PROPERTY + ": value=" + spec
                    + ", format=stall:<volumeId>:<offsetBytes>:<delayMs>[:<count>]");
        }
        try {
            return stall(p[1], Long.parseLong(p[2]), Long.parseLong(p[3]) * 1_000_000L,
                    p.length == 5 ? Integer.parseInt(p[4]) : 1);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + PROPERTY + ": value=" + spec + ": " + e.getMessage());
        }
    }

    /** Matching commands still to be held. */
    public int remaining() {
        return Math.max(0, remaining.get());
    }

    /** How long a matching command is held. */
    public long delayNs() {
        return delayNs;
    }

    /** True (and one fewer left) when this command must be held. */
    boolean take(StoreVolume v, long offsetBytes, long lengthBytes) {
        if (!v.id().equals(volumeId) || this.offsetBytes < offsetBytes || this.offsetBytes >= offsetBytes + lengthBytes) {
            return false;
        }
        return remaining.getAndDecrement() > 0;
    }

    @Override
    public String toString() {
        return "stall:" + volumeId + ":" + offsetBytes + ":" + delayNs / 1_000_000L + ":" + remaining();
    }
}
