package io.rdmablock.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.testing.Await;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The attack: a peer opens TCP connections to the soft port and never sends its connect request, each held for the
 * 5 s request timeout, to use up the node's file descriptors (and then make {@code accept()} fail with EMFILE).
 * Before the fix every one was kept for the whole timeout. Now at most {@code maxPending} wait; each further one
 * closes the oldest, so the silent ones are closed at once and a prompt peer still gets in. Loopback only.
 */
class SoftPendingLimitTest {
    private static final long T = TimeUnit.SECONDS.toNanos(10);

    @Test
    void shouldCloseTheOldestSilentConnectionsBeyondTheBound() {
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            try (SoftVerbsProvider p = new SoftVerbsProvider()) {
                SoftCmListener l = p.track(new SoftCmListener(p, new InetSocketAddress("127.0.0.1", 0), 4,
                        ServerSocketChannel::accept, 4));
                InetSocketAddress addr = new InetSocketAddress("127.0.0.1", l.localAddress().getPort());
                List<SocketChannel> silent = new ArrayList<>();
                try {
                    for (int i = 0; i < 10; i++) {
                        silent.add(SocketChannel.open(addr));
                    }
                    // well inside the 5 s request timeout: evicted for the limit, not timed out
                    Await.until(() -> l.pendingEvictions() >= 6, Duration.ofSeconds(2),
                            "6 evictions of silent connections beyond maxPending=4");
                    assertEquals(6, l.pendingEvictions(), "silent connections beyond maxPending=4 still held");
                    for (int i = 0; i < 6; i++) {
                        assertTrue(closedByListener(silent.get(i)), "silent connection " + i + " still open");
                    }
                    try (SocketChannel prompt = SocketChannel.open(addr)) {
                        ByteBuffer req = CmWire.encode(CmWire.REQ, 7, 16, 16, new byte[0]);
                        while (req.hasRemaining()) {
                            prompt.write(req);
                        }
                        CmId id = l.getRequest(T);
                        assertNotNull(id, "a prompt peer did not get in past the silent ones");
                        id.close();
                    }
                    assertEquals(7, l.pendingEvictions());
                } finally {
                    for (SocketChannel c : silent) {
                        c.close();
                    }
                    l.close();
                }
            }
        });
    }

    /** True when the listener closed {@code c}: a read sees end of stream (or a reset) within 5 s. */
    private static boolean closedByListener(SocketChannel c) throws IOException {
        c.socket().setSoTimeout(5000);
        c.setOption(StandardSocketOptions.SO_LINGER, 0);
        try {
            return c.socket().getInputStream().read() < 0;
        } catch (java.net.SocketException reset) {
            return true;
        }
    }
}
