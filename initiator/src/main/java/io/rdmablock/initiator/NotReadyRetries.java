package io.rdmablock.initiator;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The requests of a multipath device answered Namespace Not Ready (SCT 0h, SC 82h) with DNR clear, waiting to be
 * sent again. A replicated volume's primary answers so while its in-sync set is below {@code minInSync}
 * (docs/replication.md, "Below minInSync"): a condition the management plane ends (a copy resynced, a promotion),
 * so the host retries, as the Linux host does for a status without DNR (drivers/nvme/host/core.c,
 * {@code nvme_decide_disposition}). A request is resubmitted {@link #DELAY_MS} after it was answered, for as long as
 * it has been answered so for less than {@code failoverTimeoutMs}; then it fails with that status. Such an answer does
 * not count as one of the request's attempts (it reached the node and was answered, nothing was lost).
 *
 * <p>Thread-safety: {@link #add} from path pollers, {@link #takeDue} and {@link #takeAll} from the failover thread
 * and {@code close}; every method takes this object's monitor, never while calling a request back.
 */
final class NotReadyRetries {
    /** Delay before a Namespace Not Ready request is sent again, ms. */
    static final long DELAY_MS = 100;
    /** Least interval between two log lines of such answers, s. */
    static final long LOG_INTERVAL_S = 10;

    private final long timeoutNs;
    private final ArrayList<IoRequest> waiting = new ArrayList<>();
    private long dueNs;
    private long loggedNs = System.nanoTime() - TimeUnit.SECONDS.toNanos(LOG_INTERVAL_S);

    /** @param failoverTimeoutMs how long one request may be answered Namespace Not Ready before it fails, ms */
    NotReadyRetries(long failoverTimeoutMs) {
        this.timeoutNs = TimeUnit.MILLISECONDS.toNanos(failoverTimeoutMs);
    }

    /** True for Namespace Not Ready without DNR, the status this class retries. */
    static boolean retryable(int status) {
        return NvmeStatus.sct(status) == NvmeStatus.SCT_GENERIC
                && NvmeStatus.sc(status) == NvmeStatus.SC_NAMESPACE_NOT_READY && !NvmeStatus.dnr(status);
    }

    /**
     * Takes {@code r}, answered {@code status} at {@code nowNs}, for a later resubmission; or fails it when it has been
     * answered so for {@code failoverTimeoutMs} already.
     *
     * @return true when the caller should log it: the first request waiting, and none logged for
     *     {@link #LOG_INTERVAL_S} s
     */
    boolean add(IoRequest r, int status, long nowNs) {
        r.attempts--; // answered, not lost
        if (r.notReadySinceNs == 0) {
            r.notReadySinceNs = nowNs | 1; // 0 means "never answered so"
        }
        long waitedNs = nowNs - r.notReadySinceNs;
        if (waitedNs >= timeoutNs) {
            r.fail(new NvmeStatusException(Opcodes.ioName(r.opcode) + " failed: slba=" + r.slba + ", blockCount="
                    + r.blockCount + ": " + NvmeStatus.name(status) + " on every attempt for "
                    + waitedNs / 1_000_000 + " ms (failoverTimeoutMs=" + timeoutNs / 1_000_000 + "); not retried",
                    NvmeStatus.sct(status), NvmeStatus.sc(status), NvmeStatus.dnr(status)));
            return false;
        }
        synchronized (this) {
            boolean first = waiting.isEmpty();
            if (first) {
                dueNs = nowNs + TimeUnit.MILLISECONDS.toNanos(DELAY_MS);
            }
            waiting.add(r);
            if (first && nowNs - loggedNs >= TimeUnit.SECONDS.toNanos(LOG_INTERVAL_S)) {
                loggedNs = nowNs;
                return true;
            }
            return false;
        }
    }

    /** The waiting requests, in submission order, once their delay has passed at {@code nowNs}; else empty. */
    synchronized List<IoRequest> takeDue(long nowNs) {
        if (waiting.isEmpty() || nowNs - dueNs < 0) {
            return List.of();
        }
        return takeAll();
    }

    /** Every waiting request, in submission order (close, device lost). */
    synchronized List<IoRequest> takeAll() {
        ArrayList<IoRequest> list = new ArrayList<>(waiting);
        waiting.clear();
        list.sort(Comparator.comparingLong(r -> r.seq));
        return list;
    }
}
