package io.rdmablock.node.failover;

import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.node.replication.ReplicatedWrites;
import io.rdmablock.node.replication.Write;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The fencing steps of a newly promoted primary before it serves (docs/failover.md, "Promotion", node side): one
 * FLUSH carrying the set's (new) epoch to every in-sync secondary, each of which persists the epoch before it
 * executes the FLUSH (so the old primary's forwarded writes are refused from then on); then the wait until one full
 * lease has passed since the promotion was learnt (the old primary's lease, by its own clock, ends before that).
 *
 * <p>The FLUSH goes through a one-slot {@link ReplicatedWrites} on the calling thread, so a secondary that fails,
 * times out or cannot be reached is dropped by the set's compare-and-set exactly as for host writes, and the FLUSH
 * completes only once that drop is confirmed. Blocking: never run it on the agent (heartbeat) thread.
 */
public final class Activation {
    private static final Logger LOG = LoggerFactory.getLogger(Activation.class);
    /** NVMe FLUSH opcode. */
    static final int FLUSH = 0x00;

    private Activation() {
    }

    /** A FLUSH SQE of namespace {@code nsid} (NVMe Base 2.0 figure 88; everything else 0; the epoch is patched in). */
    static MemorySegment flushSqe(int nsid) {
        MemorySegment sqe = MemorySegment.ofArray(new byte[SqeDescriptor.LENGTH]);
        SqeDescriptor.opcode(sqe, FLUSH);
        SqeDescriptor.nsid(sqe, nsid);
        return sqe;
    }

    /** How an activation ended. */
    public enum Outcome {
        /** Every in-sync secondary has the epoch (or was dropped by CAS) and the lease was waited out: serve. */
        DONE,
        /** {@code cancelled} said so (demoted, deleted, closing). */
        CANCELLED,
        /** The FLUSH did not complete within the bound, or this set was deposed meanwhile: do not serve. */
        FAILED
    }

    /**
     * @param set         the new primary's replica set, at the new epoch
     * @param nsid        the namespace (1)
     * @param timeoutNs   replica timeout of each forwarded command
     * @param learntNanos {@link System#nanoTime()} when this node learnt of its promotion
     * @param leaseNanos  the lease to wait out from {@code learntNanos}
     * @param boundNs     longest wait for the FLUSH (queue set-up, answers, the drops' CAS)
     * @param cancelled   polled while waiting
     */
    public static Outcome run(ReplicaSet set, int nsid, long timeoutNs, long learntNanos, long leaseNanos,
                              long boundNs, BooleanSupplier cancelled) {
        return run(set, nsid, timeoutNs, ReplicatedWrites.DEFAULT_OPEN_TIMEOUT_NS, learntNanos, leaseNanos, boundNs,
                cancelled);
    }

    /**
     * As {@link #run(ReplicaSet, int, long, long, long, long, BooleanSupplier)}, with {@code openTimeoutNs} the least
     * bound of a forward queue's set-up ({@code rdmablock.replica.openTimeoutMs}).
     */
    public static Outcome run(ReplicaSet set, int nsid, long timeoutNs, long openTimeoutNs, long learntNanos,
                              long leaseNanos, long boundNs, BooleanSupplier cancelled) {
        int[] status = {Integer.MIN_VALUE};
        // the local copy persisted the epoch before (VolumeStore.raiseEpoch): its part of the FLUSH is done at once
        ReplicatedWrites w = new ReplicatedWrites(set, 1, 2, timeoutNs, openTimeoutNs, null, (slot, st) -> status[0] = st,
                (slot, nowNs) -> 0);
        long start = System.nanoTime();
        try {
            Write c = w.slot(0);
            c.sqe = flushSqe(nsid);
            c.ignoreMinInSync = true; // the epoch goes to every in-sync secondary, whatever their number
            int refused = w.begin(0, start);
            if (refused != 0) {
                LOG.warn("activation FLUSH not started: volume={}, status 0x{}", set.volumeId(),
                        Integer.toHexString(refused));
                return Outcome.FAILED;
            }
            while (status[0] == Integer.MIN_VALUE) {
                if (cancelled.getAsBoolean()) {
                    return Outcome.CANCELLED;
                }
                long now = System.nanoTime();
                if (now - start > boundNs) {
                    LOG.warn("activation FLUSH unanswered within {} ms: volume={}, copies={}", boundNs / 1_000_000,
                            set.volumeId(), set.describe());
                    return Outcome.FAILED;
                }
                if (w.poll(now) == 0) {
                    LockSupport.parkNanos(200_000L);
                }
            }
            if (status[0] == ReplicatedWrites.ANA_TRANSITION) {
                LOG.warn("activation ended: volume={} has another primary (a secondary refused epoch {})",
                        set.volumeId(), set.view().epoch());
                return Outcome.FAILED;
            }
            // 0, or Namespace Not Ready (a copy was dropped below min-in-sync): every copy still in sync has the epoch
            LOG.info("activation FLUSH done: volume={}, epoch={}, copies={}", set.volumeId(), set.view().epoch(),
                    set.describe());
        } finally {
            w.close(); // this thread owns its forward queues
        }
        long until = learntNanos + leaseNanos;
        while (System.nanoTime() - until < 0) {
            if (cancelled.getAsBoolean()) {
                return Outcome.CANCELLED;
            }
            LockSupport.parkNanos(Math.min(10_000_000L, Math.max(1, until - System.nanoTime())));
        }
        return set.deposed() ? Outcome.FAILED : Outcome.DONE;
    }
}
