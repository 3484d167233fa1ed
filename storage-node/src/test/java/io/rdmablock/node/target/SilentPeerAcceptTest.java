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

    /**
     * Issue 37 on the handshake path: 4 peers from 127.0.0.1 (the address's limit) read the ACCEPT and never send the
     * RTU, with a 60 s handshake timeout; a host on the same address connects, and the peer evicted for it (the
     * oldest) is dropped long before its handshake deadline (its handshake thread is freed with it), the others kept.
     */
    @Test
    @Timeout(60)
    void shouldEndTheHandshakeOfAnEvictedPeerAtOnce() throws Exception {
        TargetOptions d = TargetOptions.defaults();
        TargetOptions options = new TargetOptions(d.maxQueueEntries(), d.maxAdminEntries(), d.inCapsuleDataBytes(),
                d.mdtsBytes(), d.maxIoQueues(), d.pollers(), d.idleSpinNs(), d.idleWaitNs(), d.keepAliveGraceMs(),
                60_000_000_000L).withPending(new TargetOptions.PendingLimits(8, 4, 600_000));
        f = new TargetFixture(dir, options, 64L << 20, 512, Set.of("*"));
        for (int i = 0; i < 4; i++) {
            SoftHandshakePeer p = SoftHandshakePeer.open(f.target.localAddress());
            peers.add(p);
            p.request(1, 32);
            assertEquals(SoftHandshakePeer.ACCEPT, p.readAnswer(), "the node answers the request");
        }
        assertEquals(4, f.target.pendingQueues());
        try (RawHost admin = f.admin(0)) {
            assertEquals(1, f.target.controllerCount(), "the host connected");
            assertTrue(peers.get(0).awaitClosedByNode(20_000), "the oldest stalled peer evicted, well before 60 s");
            Await.until(() -> f.metrics.queueTeardowns("evicted") == 1, Duration.ofSeconds(10),
                    "the evicted queue torn down by its handshake thread");
            assertEquals(3, f.target.pendingQueues(), "3 stalled peers still pending");
            assertEquals(1, f.metrics.pendingEvictions("maxPendingQueuesPerAddress"));
        }
    }
}
