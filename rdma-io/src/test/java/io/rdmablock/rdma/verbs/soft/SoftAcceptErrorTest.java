package io.rdmablock.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.CmId;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The attack: a peer (or anything else on the node) exhausts the process's file descriptors so that the soft
 * listener's {@code accept()} fails with EMFILE. Before the fix the listener thread ended on that first error and the
 * node never accepted a queue pair again. Here {@code accept()} is made to fail (an injected {@link
 * SoftCmListener.Acceptor}, loopback only) and connections made after the failures must still reach
 * {@link SoftCmListener#getRequest}; every failure is counted.
 */
class SoftAcceptErrorTest {
    private static final long T = TimeUnit.SECONDS.toNanos(10);

    @Test
    void shouldKeepListeningAndCountAfterAcceptFailsWithEmfile() {
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            AtomicInteger failNext = new AtomicInteger(3);
            long totalBefore = SoftVerbsProvider.acceptErrorsTotal();
            try (SoftVerbsProvider p = new SoftVerbsProvider()) {
                SoftCmListener l = p.track(new SoftCmListener(p, new InetSocketAddress("127.0.0.1", 0), 4, s -> {
                    if (failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                        throw new IOException("Too many open files");
                    }
                    return s.accept();
                }, SoftCmListener.MAX_PENDING_CONNECTIONS));
                try {
                    connectAndExpectRequest(l, "after 3 accept failures (10 + 20 + 40 ms back-off)");
                    assertEquals(3, l.acceptErrors());
                    failNext.set(1);
                    connectAndExpectRequest(l, "after another failure (back-off reset to 10 ms)");
                    assertEquals(4, l.acceptErrors());
                    assertTrue(SoftVerbsProvider.acceptErrorsTotal() - totalBefore >= 4,
                            "process-wide count: " + SoftVerbsProvider.acceptErrorsTotal());
                } finally {
                    l.close();
                }
            }
        });
    }

    /** A raw TCP peer sends a connect request; the listener must hand it out within {@link #T}. */
    private static void connectAndExpectRequest(SoftCmListener l, String what) throws IOException {
        try (SocketChannel peer = SocketChannel.open(new InetSocketAddress("127.0.0.1", l.localAddress().getPort()))) {
            ByteBuffer req = CmWire.encode(CmWire.REQ, 7, 16, 16, new byte[0]);
            while (req.hasRemaining()) {
                peer.write(req);
            }
            CmId id = l.getRequest(T);
            assertNotNull(id, "no connect request " + what + ": the listener stopped accepting");
            id.close();
        }
    }
}
