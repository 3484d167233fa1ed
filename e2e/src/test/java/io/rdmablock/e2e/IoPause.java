package io.rdmablock.e2e;

/** Longest gap between two completed I/Os from {@link #open} to {@link #close}. */
final class IoPause {
    private long last;
    private long maxGap;
    private boolean open;

    synchronized void open(long t0) {
        last = t0;
        maxGap = 0;
        open = true;
    }

    synchronized void complete(long now) {
        if (now > last) {
            if (open) {
                maxGap = Math.max(maxGap, now - last);
            }
            last = now;
        }
    }

    /** The longest gap, counting the one still open at {@code now} (no completion since the last one). */
    synchronized long close(long now) {
        open = false;
        return Math.max(maxGap, now - last);
    }
}
