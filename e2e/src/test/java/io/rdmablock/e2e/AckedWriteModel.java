package io.rdmablock.e2e;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import static io.rdmablock.e2e.BlockStamps.BLOCK;
import static io.rdmablock.e2e.BlockStamps.decode;
import static io.rdmablock.e2e.CampaignLoad.sleep;

/**
 * Acknowledged writes per block. {@code LANES} writers each own a disjoint region (so one write at a time per
 * block, and a block's sequence numbers only grow), writing 1..4 blocks at a time; every block carries magic,
 * block number, writer, sequence and a checksum over the rest of its 4 KiB. Per block: the sequence of the last
 * acknowledged write and when it was acknowledged ({@code acked}, {@code ackedAt}; recorded once the write's
 * future completed), the highest sequence issued ({@code issued}), the highest one a completed read returned
 * ({@code observed}). Rules, for a read that began after the values were sampled: sequence >= the acknowledged
 * one (else a stale read, or in a read-back after a heal a lost write); >= the observed one (reads never go back
 * in time); <= the issued one and a good checksum (else corrupt).
 */
final class AckedWriteModel {
    static final int LANES = 4;
    final int perLane;
    final int blocks;
    final long probeBlock;
    final AtomicLongArray acked;
    final AtomicLongArray ackedAt;
    final AtomicLongArray issued;
    final AtomicLongArray observed;
    final AtomicLong writesAcked = new AtomicLong();
    final AtomicLong writesFailed = new AtomicLong();
    final AtomicLong stale = new AtomicLong();
    final AtomicLong corrupt = new AtomicLong();
    private final Set<String> problems = java.util.Collections.synchronizedSet(new LinkedHashSet<>());
    private volatile long healNs = Long.MAX_VALUE;
    private final AtomicLong acksAfterHeal = new AtomicLong();

    AckedWriteModel(long volumeBytes) {
        int volumeBlocks = (int) (volumeBytes / BLOCK);
        this.perLane = (volumeBlocks - 16) / LANES;
        this.blocks = perLane * LANES;
        this.probeBlock = volumeBlocks - 1; // outside every lane: the zombie probe's
        this.acked = new AtomicLongArray(blocks);
        this.ackedAt = new AtomicLongArray(blocks);
        this.issued = new AtomicLongArray(blocks);
        this.observed = new AtomicLongArray(blocks);
    }

    void noteAck(long issuedNs) {
        if (issuedNs > healNs) {
            acksAfterHeal.incrementAndGet();
        }
    }

    void writeFailed(String why) {
        writesFailed.incrementAndGet();
        note(why);
    }

    private void note(String p) {
        if (problems.size() < 50) {
            problems.add(p);
        }
    }

    String problems(int max) {
        synchronized (problems) {
            return problems.stream().limit(max).toList().toString();
        }
    }

    void awaitProgress(long acks, long seconds) {
        long target = writesAcked.get() + acks;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (writesAcked.get() < target && System.nanoTime() < deadline) {
            sleep(20);
        }
    }

    /** Waits (bounded) for {@code acks} writes issued after {@code heal} to be acknowledged; true if they were. */
    boolean awaitAcksIssuedAfter(long heal, long acks, long seconds, CampaignLoad s) {
        acksAfterHeal.set(0);
        healNs = heal;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        try {
            while (System.nanoTime() < deadline) {
                if (acksAfterHeal.get() >= acks) {
                    return true;
                }
                if (s.dev.lossReason() != null) {
                    return false; // single path: nothing brings it back
                }
                sleep(20);
            }
            return false;
        } finally {
            healNs = Long.MAX_VALUE;
        }
    }

    /** Checks one block read into {@code buf} at {@code off}; returns the problem (also counted) or null. */
    String checkRead(MemorySegment buf, long off, long block, long ackedBefore, long seenBefore, String what) {
        int b = (int) block;
        long seq = decode(buf, off, block);
        String p = null;
        if (seq < 0) {
            p = "corrupt: " + what + " of block " + block + ": bad stamp or checksum (word0 "
                    + Long.toHexString(buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off)) + ")";
        } else if (seq > issued.get(b)) {
            p = "corrupt: " + what + " of block " + block + " returned sequence " + seq + ", never written (issued "
                    + issued.get(b) + ")";
        } else if (seq < ackedBefore) {
            p = (what.equals("read-back") ? "lost: " : "stale: ") + what + " of block " + block + " returned "
                    + "sequence " + seq + ", but " + ackedBefore + " was acknowledged before the read began ("
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ackedAt.get(b)) + " ms before now)";
        } else if (seq < seenBefore) {
            p = "stale: " + what + " of block " + block + " went back in time: sequence " + seq + " after a "
                    + "completed read returned " + seenBefore;
        }
        if (p != null) {
            note(p);
            if (!what.equals("read-back")) {
                if (p.startsWith("corrupt")) {
                    corrupt.incrementAndGet();
                } else {
                    stale.incrementAndGet();
                }
            }
            return p;
        }
        observed.accumulateAndGet(b, seq, Math::max);
        return null;
    }
}
