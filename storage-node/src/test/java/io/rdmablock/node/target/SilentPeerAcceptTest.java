package io.rdmablock.node.target;

import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The attack: peers open a connection to the node's listener (soft provider, loopback) and say nothing, or send the
 * connect request, read the ACCEPT and never send the RTU that ends the handshake. Before the fix the acceptor
 * thread waited up to the handshake timeout (5 s by default) for each such peer, one at a time, so every other host
 * waited behind them. Expected: another host connects (admin queue and Fabrics Connect) within 1 s while they hang,
 * and each stalled peer is dropped at its handshake deadline, its pending place freed.
 */
class SilentPeerAcceptTest {
    /** Handshake timeout of this test's target (ms); the default is 5 s. */
    private static final long HANDSHAKE_TIMEOUT_MS = 2_000;

    @TempDir
    Path dir;
    private TargetFixture f;
    private final List<SoftHandshakePeer> peers = new ArrayList<>();

    @AfterEach
    void tearDown() {
        peers.forEach(SoftHandshakePeer::close);
        if (f != null) {
            f.close();
        }
    }

    @Test
    @Timeout(30)
    void shouldConnectAnotherHostWithin1sWhilePeersStallTheHandshake() throws Exception {
        TargetOptions d = TargetOptions.defaults();
        TargetOptions options = new TargetOptions(d.maxQueueEntries(), d.maxAdminEntries(), d.inCapsuleDataBytes(),
                d.mdtsBytes(), d.maxIoQueues(), d.pollers(), d.idleSpinNs(), d.idleWaitNs(), d.keepAliveGraceMs(),
                HANDSHAKE_TIMEOUT_MS * 1_000_000L);
        f = new TargetFixture(dir, options, 64L << 20, 512, Set.of("*"));
        long t0 = System.nanoTime();
        for (int i = 0; i < 3; i++) {
            peers.add(SoftHandshakePeer.open(f.target.localAddress())); // says nothing
        }
        List<SoftHandshakePeer> midHandshake = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            SoftHandshakePeer p = SoftHandshakePeer.open(f.target.localAddress());
            peers.add(p);
            midHandshake.add(p);
            p.request(i % 2, 32); // admin and I/O queues alike
            assertEquals(SoftHandshakePeer.ACCEPT, p.readAnswer(), "the node answers the request");
            // ... and never sends the RTU
        }
        for (int round = 0; round < 3; round++) {
            long c0 = System.nanoTime();
            try (RawHost admin = f.admin(0)) {
                long ms = (System.nanoTime() - c0) / 1_000_000;
                System.out.printf("silent peers: a host connected (handshake + Fabrics Connect) in %d ms with 3 "
                        + "silent and 4 mid-handshake peers%n", ms);
                assertTrue(ms < 1_000, "connect took " + ms + " ms behind stalled peers");
            }
        }
        assertEquals(4, f.target.pendingQueues(), "the stalled handshakes hold their pending places meanwhile");
        for (SoftHandshakePeer p : midHandshake) {
            assertTrue(p.awaitClosedByNode(HANDSHAKE_TIMEOUT_MS + 3_000), "stalled peer dropped at its deadline");
        }
        long droppedMs = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf("silent peers: 4 mid-handshake peers dropped within %d ms (handshake timeout %d ms)%n",
                droppedMs, HANDSHAKE_TIMEOUT_MS);
        Await.until(() -> f.target.pendingQueues() == 0, Duration.ofSeconds(3), "their pending places freed");
    }
}
