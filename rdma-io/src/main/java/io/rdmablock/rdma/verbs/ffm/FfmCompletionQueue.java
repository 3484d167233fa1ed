package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_COMP_CHANNEL;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_CQ;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_WC;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.POLLFD;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_IMM_DATA;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_STATUS;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_VENDOR_ERR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_WC_FLAGS;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.WC_WR_ID;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.off;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.VerbsException;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An {@code ibv_cq} with its own {@code ibv_comp_channel}. {@link #poll} calls {@code ops.poll_cq} into a
 * preallocated native {@code ibv_wc} array ({@value #WC_BATCH} entries, 48 bytes each) and copies into the caller's
 * {@link WorkCompletion}s: no allocation. {@link #await} arms {@code ops.req_notify_cq}, re-polls (closing the
 * race), then {@code poll(2)}s the O_NONBLOCK channel fd together with an eventfd ({@link #wakeup}); events are
 * acked in batches ({@code ibv_ack_cq_events}) and all remaining ones before {@code ibv_destroy_cq}.
 */
final class FfmCompletionQueue implements CompletionQueue {
    static final int WC_BATCH = 32;
    private static final ValueLayout.OfLong J_LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt J_INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final int ACK_BATCH = 64;
    private static final WcOpcode[] SEND_OPCODES = {WcOpcode.SEND, WcOpcode.RDMA_WRITE, WcOpcode.RDMA_READ};

    private final FfmDeviceContext device;
    private final Arena arena = Arena.ofShared();
    final MemorySegment cq;
    private final MemorySegment channel;
    private final MemorySegment fnPollCq;
    private final MemorySegment fnReqNotifyCq;
    private final int capacity;
    private final int channelFd;
    private final int wakeFd;
    private final MemorySegment wcs;
    private final MemorySegment pollFds;
    /** The {@code struct timespec} of {@link FdPoll#ppoll}. */
    private final MemorySegment timespec;
    private final MemorySegment cqOut;
    private final MemorySegment ctxOut;
    private final MemorySegment buf8;
    private final boolean external;
    private final boolean iwarp;
    private int unackedEvents;
    private boolean closed;
    private volatile boolean overrun;

    private FfmCompletionQueue(FfmDeviceContext device, MemorySegment cq, MemorySegment channel, int wakeFd,
                               boolean external) {
        this.device = device;
        this.external = external;
        this.iwarp = device.iwarp();
        this.cq = cq.reinterpret(IBV_CQ.byteSize());
        this.channel = channel.reinterpret(IBV_COMP_CHANNEL.byteSize());
        this.fnPollCq = device.fnPollCq;
        this.fnReqNotifyCq = device.fnReqNotifyCq;
        this.capacity = this.cq.get(JAVA_INT, off(IBV_CQ, "cqe"));
        this.channelFd = this.channel.get(JAVA_INT, off(IBV_COMP_CHANNEL, "fd"));
        this.wakeFd = wakeFd;
        this.wcs = Native.unscoped(arena.allocate(IBV_WC, WC_BATCH)); // no arena acquire per poll_cq
        this.pollFds = arena.allocate(POLLFD, 3);
        this.cqOut = arena.allocate(ADDRESS);
        this.ctxOut = arena.allocate(ADDRESS);
        this.buf8 = arena.allocate(JAVA_LONG);
        this.timespec = arena.allocate(FdPoll.TIMESPEC_BYTES, 8);
        pollFds.set(JAVA_INT, 0, channelFd);
        pollFds.set(JAVA_SHORT, 4, (short) Native.POLLIN);
        pollFds.set(JAVA_INT, 8, wakeFd);
        pollFds.set(JAVA_SHORT, 12, (short) Native.POLLIN);
        pollFds.set(JAVA_INT, 16, device.asyncFd); // -1 (stub): ignored by poll(2)
        pollFds.set(JAVA_SHORT, 20, (short) Native.POLLIN);
    }

    /** {@code ibv_create_comp_channel} + {@code ibv_create_cq(ctx, capacity, NULL, channel, 0)}. */
    static FfmCompletionQueue create(FfmDeviceContext device, int capacity) {
        MemorySegment ch = MemorySegment.NULL;
        MemorySegment cq = MemorySegment.NULL;
        int wake = -1;
        try {
            ch = (MemorySegment) Native.IBV_CREATE_COMP_CHANNEL.invokeExact(Native.errnoSegment(), device.ctx);
            if (ch.address() == 0) {
                throw Native.fail("ibv_create_comp_channel", Native.errno(), "device=" + device.name());
            }
            cq = (MemorySegment) Native.IBV_CREATE_CQ.invokeExact(Native.errnoSegment(), device.ctx, capacity,
                    MemorySegment.NULL, ch, 0);
            if (cq.address() == 0) {
                throw Native.fail("ibv_create_cq", Native.errno(), "capacity=" + capacity + ", device=" + device.name());
            }
            wake = (int) Native.EVENTFD.invokeExact(0, Native.EFD_NONBLOCK | Native.EFD_CLOEXEC);
            if (wake < 0) {
                throw new VerbsException("eventfd failed for a completion queue");
            }
            FfmCompletionQueue q = new FfmCompletionQueue(device, cq, ch, wake, false);
            Native.setNonBlocking(q.channelFd, "ibv_comp_channel");
            return q;
        } catch (Throwable t) {
            try {
                if (cq.address() != 0) {
                    int ignored = (int) Native.IBV_DESTROY_CQ.invokeExact(Native.errnoSegment(), cq);
                }
                if (ch.address() != 0) {
                    int ignored = (int) Native.IBV_DESTROY_COMP_CHANNEL.invokeExact(Native.errnoSegment(), ch);
                }
            } catch (Throwable suppressed) {
                t.addSuppressed(suppressed);
            }
            Native.closeFd(wake);
            if (t instanceof VerbsException ve) {
                throw ve;
            }
            throw new VerbsException("ibv_create_cq failed: " + t, 0, t);
        }
    }

    /**
     * Wraps a CQ this provider did not create (the benchmark's and tests' stub); {@link #close} then frees only the
     * Java side and never calls libibverbs on it.
     */
    static FfmCompletionQueue external(FfmDeviceContext device, MemorySegment cq) {
        MemorySegment ch = cq.reinterpret(IBV_CQ.byteSize()).get(ADDRESS, off(IBV_CQ, "channel"));
        int wake;
        try {
            wake = (int) Native.EVENTFD.invokeExact(0, Native.EFD_NONBLOCK | Native.EFD_CLOEXEC);
        } catch (Throwable t) {
            throw new VerbsException("eventfd failed: " + t, 0, t);
        }
        return new FfmCompletionQueue(device, cq, ch, wake, true);
    }

    @Override
    public int capacity() {
        return capacity;
    }

    /** Called when the device reports IBV_EVENT_CQ_ERR for this CQ; wakes a waiting {@link #await}. */
    void markOverrun() {
        overrun = true;
        wakeup();
    }

    @Override
    public int poll(WorkCompletion[] out, int max) {
        if (overrun) {
            throw new CqOverrunException("completion queue overrun (IBV_EVENT_CQ_ERR): capacity=" + capacity
                    + ", device=" + device.name() + "; size CQs for the sum of the work queues attached");
        }
        int limit = Math.min(max, out.length);
        int total = 0;
        while (total < limit) {
            int want = Math.min(limit - total, WC_BATCH);
            int n;
            try {
                n = (int) Native.OPS_POLL_CQ.invokeExact(fnPollCq, cq, want, wcs);
            } catch (Throwable t) {
                throw new VerbsException("ibv_poll_cq failed: " + t, 0, t);
            }
            if (n < 0) {
                throw new CqOverrunException("ibv_poll_cq failed: rc=" + n + ", capacity=" + capacity
                        + ", device=" + device.name() + " (CQ in error state, e.g. overrun)");
            }
            for (int i = 0; i < n; i++) {
                long base = (long) i * IBV_WC.byteSize();
                long wrId = wcs.get(J_LONG, base + WC_WR_ID);
                copy(base, wrId, out[total++]);
            }
            if (n < want) {
                break;
            }
        }
        return total;
    }

    private void copy(long base, long wrId, WorkCompletion wc) {
        // status|opcode, vendor_err|byte_len, imm_data|qp_num are adjacent u32 pairs (checked in Words)
        long statusOpcode = wcs.get(J_LONG, base + WC_STATUS);
        long vendorLen = wcs.get(J_LONG, base + WC_VENDOR_ERR);
        long immQpn = wcs.get(J_LONG, base + WC_IMM_DATA);
        int flags = wcs.get(J_INT, base + WC_WC_FLAGS);
        wc.wrId = wrId;
        // Reference stores only when the value changes: a store into an old-generation WorkCompletion costs a G1
        // post-write barrier (with a StoreLoad fence); in steady state status and opcode rarely change.
        WcStatus status = WcStatus.of(Words.low(statusOpcode));
        if (wc.status != status) {
            wc.status = status;
        }
        if (iwarp && status != WcStatus.SUCCESS) {
            device.errorCompletion(Words.high(immQpn));
        }
        int op = Words.high(statusOpcode);
        WcOpcode opcode = op == 128 ? WcOpcode.RECV : op == 129 ? WcOpcode.RECV_RDMA_WITH_IMM
                : op >= 0 && op < SEND_OPCODES.length ? SEND_OPCODES[op] : WcOpcode.SEND;
        if (wc.opcode != opcode) {
            wc.opcode = opcode;
        }
        wc.vendorErr = Words.low(vendorLen);
        wc.byteLen = Words.high(vendorLen);
        wc.withImm = (flags & NativeStructs.IBV_WC_WITH_IMM) != 0;
        wc.imm = wc.withImm ? Integer.reverseBytes(Words.low(immQpn)) : 0;
        wc.withInv = (flags & NativeStructs.IBV_WC_WITH_INV) != 0;
        wc.invalidatedRkey = wc.withInv ? Words.low(immQpn) : 0; // host order, the imm_data union
        wc.qpNum = Words.high(immQpn);
    }

    @Override
    public int await(WorkCompletion[] out, int max, long timeoutNs) {
        int n = poll(out, max);
        if (n > 0) {
            return n;
        }
        long deadline = System.nanoTime() + Math.max(0, timeoutNs);
        while (true) {
            reqNotify();
            n = poll(out, max);
            if (n > 0) {
                return n;
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                return 0;
            }
            int ready = FdPoll.ppoll(pollFds, 3, remaining, timespec);
            if (ready > 0) {
                if ((pollFds.get(JAVA_SHORT, 22) & Native.POLLIN) != 0) {
                    device.drainAsyncEvents();
                }
                if ((pollFds.get(JAVA_SHORT, 6) & Native.POLLIN) != 0) {
                    consumeEvent();
                }
                if ((pollFds.get(JAVA_SHORT, 14) & Native.POLLIN) != 0) {
                    FdPoll.drainEventFd(wakeFd, buf8);
                    return poll(out, max);
                }
            }
        }
    }

    private void reqNotify() {
        int rc;
        try {
            rc = (int) Native.OPS_REQ_NOTIFY_CQ.invokeExact(fnReqNotifyCq, cq, 0);
        } catch (Throwable t) {
            throw new VerbsException("ibv_req_notify_cq failed: " + t, 0, t);
        }
        if (rc != 0) {
            throw Native.fail("ibv_req_notify_cq", Math.abs(rc), "device=" + device.name());
        }
    }

    private void consumeEvent() {
        int rc;
        try {
            rc = (int) Native.IBV_GET_CQ_EVENT.invokeExact(Native.errnoSegment(), channel, cqOut, ctxOut);
        } catch (Throwable t) {
            throw new VerbsException("ibv_get_cq_event failed: " + t, 0, t);
        }
        if (rc != 0) {
            int errno = Native.errno();
            if (errno == Errno.EAGAIN || errno == Errno.EINTR) {
                return;
            }
            throw Native.fail("ibv_get_cq_event", errno, "fd=" + channelFd);
        }
        if (++unackedEvents >= ACK_BATCH) {
            ackEvents();
        }
    }

    private void ackEvents() {
        if (unackedEvents == 0) {
            return;
        }
        try {
            Native.IBV_ACK_CQ_EVENTS.invokeExact(cq, unackedEvents);
        } catch (Throwable t) {
            throw new VerbsException("ibv_ack_cq_events failed: " + t, 0, t);
        }
        unackedEvents = 0;
    }

    @Override
    public void wakeup() {
        FdPoll.signalEventFd(wakeFd);
    }

    /** Acks pending events, {@code ibv_destroy_cq}, {@code ibv_destroy_comp_channel}; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        device.forget(this);
        if (external) {
            Native.closeFd(wakeFd);
            arena.close();
            return;
        }
        try {
            ackEvents();
            int rc = (int) Native.IBV_DESTROY_CQ.invokeExact(Native.errnoSegment(), cq);
            if (rc != 0) {
                throw Native.fail("ibv_destroy_cq", rc > 0 ? rc : Native.errno(),
                        "capacity=" + capacity + ", device=" + device.name() + " (a queue pair still uses it?)");
            }
            rc = (int) Native.IBV_DESTROY_COMP_CHANNEL.invokeExact(Native.errnoSegment(), channel);
            if (rc != 0) {
                throw Native.fail("ibv_destroy_comp_channel", rc > 0 ? rc : Native.errno(), "fd=" + channelFd);
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("ibv_destroy_cq failed: " + t, 0, t);
        } finally {
            Native.closeFd(wakeFd);
            arena.close();
        }
    }
}
