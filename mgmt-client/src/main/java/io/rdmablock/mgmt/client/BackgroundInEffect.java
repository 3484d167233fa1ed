package io.rdmablock.mgmt.client;

/**
 * A node's background budget as in effect on the node (docs/qos.md, "Background budget"): reported in each of its
 * heartbeats ({@link HeartbeatRequest#background}), kept in the management server's memory (not stored) and shown
 * with the node ({@link Node#backgroundInEffect}).
 *
 * @param rateBytesPerSec    the rate now, bytes/s (between the floor and the ceiling, by the foreground's latency)
 * @param ceilingBytesPerSec the ceiling in force, bytes/s, &gt; 0
 * @param floorBytesPerSec   the floor in force, bytes/s, 1..ceiling
 */
public record BackgroundInEffect(long rateBytesPerSec, long ceilingBytesPerSec, long floorBytesPerSec) {
    public BackgroundInEffect {
        if (floorBytesPerSec <= 0 || ceilingBytesPerSec < floorBytesPerSec || rateBytesPerSec < 0) {
            throw new IllegalArgumentException("invalid background: rateBytesPerSec=" + rateBytesPerSec
                    + ", ceilingBytesPerSec=" + ceilingBytesPerSec + ", floorBytesPerSec=" + floorBytesPerSec
                    + ": want 0 < floor <= ceiling, rate >= 0");
        }
    }
}
