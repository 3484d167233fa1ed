package io.rdmablock.e2e;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every write of {@link FailoverCampaign}'s load on one volume, for checking its snapshots afterwards
 * ({@link SnapshotChecker}): per lane, the tick at which write {@code seq} was issued and the tick at which it was
 * acknowledged (none for a write that failed or timed out: it may or may not have landed); per block, the sequences
 * written to it, in order. Ticks come from one shared counter ({@link #tick}), also read by the snapshot requests, so
 * "acknowledged before the request" and "issued before the answer" are exact orders, not clock comparisons.
 *
 * <p>Each lane is written by one thread, one write at a time (its region is its own), so per block the issue ticks
 * rise and an acknowledged write's tick is below the next write's issue tick. Queries are for after the load stopped
 * (its threads joined).
 */
final class SnapshotHistory {
    static final long NEVER = Long.MAX_VALUE;
    private final AtomicLong clock = new AtomicLong();
    private final int perLane;
    private final int blocks;
    /** Per lane, indexed by sequence (1..): issue tick, acknowledgement tick (NEVER: not acknowledged). */
    private final long[][] issuedAt;
    private final long[][] ackedAt;
    /** Per block: the sequences written to it, ascending ({@code counts[b]} of them). */
    private final int[][] versions;
    private final int[] counts;

    SnapshotHistory(int lanes, int perLane) {
        this.perLane = perLane;
        this.blocks = lanes * perLane;
        this.issuedAt = new long[lanes][64];
        this.ackedAt = new long[lanes][64];
        this.versions = new int[blocks][];
        this.counts = new int[blocks];
    }

    int blocks() {
        return blocks;
    }

    /** The next tick of the shared order. */
    long tick() {
        return clock.incrementAndGet();
    }

    /** Records write {@code seq} of {@code lane} to blocks {@code first..first+n-1}, issued now; returns its tick. */
    long issue(int lane, long seq, long first, int n) {
        int s = Math.toIntExact(seq);
        if (s >= issuedAt[lane].length) {
            issuedAt[lane] = Arrays.copyOf(issuedAt[lane], Math.max(s + 1, 2 * issuedAt[lane].length));
            ackedAt[lane] = Arrays.copyOf(ackedAt[lane], issuedAt[lane].length);
        }
        for (int b = (int) first; b < first + n; b++) {
            if (versions[b] == null) {
                versions[b] = new int[4];
            } else if (counts[b] == versions[b].length) {
                versions[b] = Arrays.copyOf(versions[b], 2 * counts[b]);
            }
            versions[b][counts[b]++] = s;
        }
        ackedAt[lane][s] = NEVER;
        long t = tick();
        issuedAt[lane][s] = t;
        return t;
    }

    /** Records that write {@code seq} of {@code lane} was acknowledged now. */
    void acked(int lane, long seq) {
        ackedAt[lane][(int) seq] = tick();
    }

    private int lane(int block) {
        return block / perLane;
    }

    /** Whether {@code seq} was written to {@code block} (0, never written, always is). */
    boolean written(int block, long seq) {
        return seq == 0 || indexOf(block, seq) >= 0;
    }

    private int indexOf(int block, long seq) {
        return versions[block] == null ? -1 : Arrays.binarySearch(versions[block], 0, counts[block], (int) seq);
    }

    /** Issue tick of version {@code seq} of {@code block} (0 for 0, the zeroes it held before any write). */
    long issuedAt(int block, long seq) {
        return seq == 0 ? 0 : issuedAt[lane(block)][(int) seq];
    }

    /** Acknowledgement tick of version {@code seq} of {@code block}, {@link #NEVER} if it was not acknowledged. */
    long ackedAt(int block, long seq) {
        return seq == 0 ? 0 : ackedAt[lane(block)][(int) seq];
    }

    /** The last version of {@code block} acknowledged before tick {@code t} (0: none). */
    long lastAckedBefore(int block, long t) {
        int[] v = versions[block];
        int i = counts[block] - 1;
        while (i >= 0 && issuedAt(block, v[i]) >= t) { // issue ticks rise along a block's versions
            i--;
        }
        for (; i >= 0; i--) {
            if (ackedAt(block, v[i]) < t) {
                return v[i]; // each earlier write was acknowledged before this one was issued
            }
        }
        return 0;
    }
}
