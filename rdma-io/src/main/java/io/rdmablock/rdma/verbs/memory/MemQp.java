package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QpState;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.emu.EmuDevice;
import io.rdmablock.rdma.verbs.emu.EmuQp;

/**
 * A memory-provider RC queue pair: the shared queue pair ({@link EmuQp}: rings, post-time checks, completions, as
 * soft's) with the in-process transport. Posted WRs are executed by {@link MemLink} on the posting thread (or, when
 * the peer's thread is already running the connection's work, by that thread): SEND is copied into the peer's next
 * posted RECV, RDMA READ/WRITE are copies between registered regions after the rkey, protection domain, bounds and
 * access checks ({@link MemTransfer}). Completions go straight onto the CQs; a poll has nothing to step.
 *
 * <p>The fields without {@code volatile} below are touched only inside the link's drain.
 */
final class MemQp extends EmuQp {
    /** RNR: one retry per this many ns, as soft's {@code QpEngine.RNR_DELAY_NS}. */
    static final long RNR_DELAY_NS = 1_000_000L;
    /** Result of an execution step: no RECV posted at the responder. */
    static final int RNR = -1;
    private static final int OK = 0;

    volatile MemLink link;
    private long sqHead;
    private long rnrSeq = -1;
    private long rnrStartNs;
    private volatile boolean rnrTimerArmed;
    /** A SEND/WRITE_WITH_IMM at the head of this send queue waits for a RECV of the peer. */
    volatile boolean rnrStalled;

    MemQp(EmuDevice device, QpInitAttr a) {
        super(device, a);
        attachToCqs();
    }

    // ---------------------------------------------------------------- the transport's part (the poster's thread)

    @Override
    protected void sendPosted() {
        MemLink l = link;
        if (l != null) {
            l.kick();
        } else if (state() == QpState.ERROR) {
            flushAll(); // never connected: nothing else consumes these queues
        }
    }

    @Override
    protected void recvPosted() {
        MemLink l = link;
        if (l == null ? state() == QpState.ERROR : (l.peerOf(this).rnrStalled || state() == QpState.ERROR)) {
            sendPosted();
        }
    }

    /** Moves to ERROR from any thread (also on CQ overrun); the connection is torn down and both sides flush. */
    @Override
    public void requestError() {
        setState(QpState.ERROR);
        MemLink l = link;
        if (l != null) {
            l.breakLink();
        } else {
            flushAll();
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        requestError();
        closed = true;
        detachAndUntrack();
    }

    // ---------------------------------------------------------------- execution (inside MemLink's drain only)

    /** Executes this QP's posted send WRs in order against responder {@code r}; true when anything changed. */
    boolean runSends(MemQp r, MemLink l) {
        boolean progress = false;
        while (sqHead < sqTail && state() != QpState.ERROR) {
            int i = (int) sqHead & sqMask;
            int st = sqPostStatus[i] != 0 ? sqPostStatus[i] : MemTransfer.execute(this, i, r);
            if (st == RNR) {
                if (rnrSeq != sqHead) {
                    rnrSeq = sqHead;
                    rnrStartNs = System.nanoTime();
                }
                int limit = attr().rnrRetryCount;
                long waitedNs = System.nanoTime() - rnrStartNs;
                if (limit == 7 || waitedNs < limit * RNR_DELAY_NS) {
                    rnrStalled = true;
                    if (r.hasRecv()) {
                        continue; // a RECV was posted meanwhile; its poster may have missed rnrStalled
                    }
                    if (limit != 7 && !rnrTimerArmed) {
                        rnrTimerArmed = true;
                        MemFabric.schedule(() -> {
                            rnrTimerArmed = false;
                            l.kick();
                        }, limit * RNR_DELAY_NS - waitedNs + 100_000L);
                    }
                    return progress;
                }
                st = WcStatus.RNR_RETRY_EXC_ERR.ordinal();
            }
            rnrStalled = false;
            rnrSeq = -1;
            sqHead++;
            progress = true;
            if (st == OK) {
                if ((sqFlags[i] & SendWr.SIGNALED) != 0) {
                    completeSend(i, sqHead, WcStatus.SUCCESS);
                }
            } else {
                completeSend(i, sqHead, WcStatus.of(st));
                l.breakLink();
                return true;
            }
        }
        return progress;
    }

    /** Flushes every outstanding WR of both queues with WR_FLUSH_ERR; true when there were any. */
    boolean flushAll() {
        long h = sqHead;
        sqHead = flushSends(h);
        boolean p = sqHead != h;
        p |= flushRecvs();
        rnrStalled = false;
        return p;
    }
}
