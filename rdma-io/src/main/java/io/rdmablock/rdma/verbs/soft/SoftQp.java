package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QpState;
import io.rdmablock.rdma.verbs.emu.EmuCq;
import io.rdmablock.rdma.verbs.emu.EmuDevice;
import io.rdmablock.rdma.verbs.emu.EmuQp;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import org.slf4j.LoggerFactory;

/**
 * A soft RC queue pair: the shared queue pair ({@link EmuQp}: rings, post-time checks, completions) with the TCP
 * transport, its {@link QpEngine}. A post rings the engine's doorbell ({@link QpDriver#kick}); a poll or a wait on
 * one of its completion queues steps the engine on the caller's thread ({@link QpDriver}).
 */
final class SoftQp extends EmuQp {
    final QpEngine engine;
    /** The frame header of each send slot. */
    final ByteBuffer[] sqHeader;
    /** A view of each send slot's inline data. */
    final ByteBuffer[] sqInlineView;

    SoftQp(EmuDevice device, QpInitAttr a) {
        super(device, a);
        int sqSize = sqMask + 1;
        sqHeader = new ByteBuffer[sqSize];
        sqInlineView = new ByteBuffer[sqSize];
        ByteBuffer headers = ByteBuffer.allocateDirect(sqSize * FrameDescriptor.HEADER_LENGTH);
        for (int i = 0; i < sqSize; i++) {
            sqHeader[i] = headers.slice(i * FrameDescriptor.HEADER_LENGTH, FrameDescriptor.HEADER_LENGTH);
            sqInlineView[i] = inlineBuffer.slice(i * maxInline, maxInline);
        }
        engine = new QpEngine(this);
        attachToCqs();
        engine.start();
    }

    /** Hands the connected socket to the engine and moves to RTS (rdma_cm: INIT -> RTR -> RTS on ESTABLISHED). */
    void establish(SocketChannel channel, int peerResponderResources) {
        engine.establish(channel, Math.min(attr().initiatorDepth, peerResponderResources));
        if (state() != QpState.ERROR) {
            setState(QpState.RTS);
        }
    }

    @Override
    protected void sendPosted() {
        engine.driver.kick();
    }

    @Override
    protected void recvPosted() {
        if (state() == QpState.ERROR) {
            engine.wake();
        }
    }

    /** Moves to ERROR from any thread; the engine flushes. */
    @Override
    public void requestError() {
        setState(QpState.ERROR);
        engine.wake();
    }

    @Override
    protected void pollStep() {
        engine.driver.pollInline();
    }

    @Override
    protected boolean awaitStep(EmuCq cq, long maxNs) {
        return engine.driver.awaitInline(cq, maxNs);
    }

    @Override
    protected void handBack() {
        engine.driver.handBack();
    }

    @Override
    protected void wakeAwait() {
        engine.selector.wakeup();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        setState(QpState.ERROR);
        boolean stopped = engine.shutdown(5_000_000_000L);
        detachAndUntrack();
        if (!stopped) {
            LoggerFactory.getLogger(SoftQp.class).warn("soft qp {}: engine did not stop within 5 s", qpNum());
        }
    }
}
