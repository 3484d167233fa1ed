package io.rdmablock.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The attacks of a soft-provider peer on memory it was not given: it reuses an rkey learnt for another connection, or
 * it derives the rkey of a region registered next to one it was given. Each must end in REM_ACCESS_ERR at the peer
 * with nothing read or written. Before the fix keys were {@code index << 8 | generation} (rkey {@code | 0x80}), so the
 * neighbour's rkey was the peer's own plus {@code 0x101}. Loopback only; every wait is bounded.
 */
class SoftRemoteKeyTest {
    private static final long T = TimeUnit.SECONDS.toNanos(10);
    private static final int REMOTE_RW = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;
    private static final int LEN = 4096;

    /** A queue pair of the attacking host, connected to a node-side queue pair in {@code nodePd}. */
    private record Link(CmId host, CompletionQueue hostCq, CmId node) implements AutoCloseable {
        @Override
        public void close() {
            host.close();
            node.close();
            hostCq.close();
        }
    }

    private static Link connect(SoftVerbsProvider hostSide, CmListener listener, ProtectionDomain hostPd,
                                ProtectionDomain nodePd) throws Exception {
        CmId h = hostSide.createId();
        h.resolve(new InetSocketAddress("127.0.0.1", listener.localAddress().getPort()), T);
        CompletionQueue hcq = hostSide.device().createCq(64);
        h.createQp(new QpInitAttr().pd(hostPd).cq(hcq));
        CompletableFuture<Void> connected = CompletableFuture.runAsync(() -> h.connect(null, T));
        CmId n = listener.getRequest(T);
        assertNotNull(n, "no connect request");
        n.createQp(new QpInitAttr().pd(nodePd).cq(n.device().createCq(64)));
        n.accept(null, T);
        connected.get(T, TimeUnit.NANOSECONDS);
        return new Link(h, hcq, n);
    }

    /** Posts one signaled RDMA READ or WRITE of {@link #LEN} bytes and returns its completion status. */
    private static WcStatus rdma(Link l, WrOpcode op, MemoryRegion local, long remoteAddr, int rkey) {
        SendWr w = new SendWr();
        w.wrId = 1;
        w.opcode = op;
        w.sendFlags = SendWr.SIGNALED;
        w.numSge = 1;
        w.sgList[0].set(local, 0, LEN);
        w.remoteAddr = remoteAddr;
        w.rkey = rkey;
        l.host().qp().postSend(w);
        WorkCompletion[] wc = WorkCompletion.array(1);
        assertEquals(1, l.hostCq().await(wc, 1, T), "no completion");
        return wc[0].status;
    }

    private static void fill(MemorySegment s, byte b) {
        s.fill(b);
    }

    private static void assertAll(MemorySegment s, byte b, String what) {
        for (long i = 0; i < s.byteSize(); i++) {
            assertEquals(b, s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i), what + " at offset " + i);
        }
    }

    @Test
    void shouldRefuseAnRkeyOfAnotherConnectionsProtectionDomain() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (SoftVerbsProvider node = new SoftVerbsProvider(); SoftVerbsProvider host = new SoftVerbsProvider();
                 Arena arena = Arena.ofShared()) {
                CmListener listener = node.listen(new InetSocketAddress("127.0.0.1", 0), 4);
                ProtectionDomain victimPd = node.device().allocPd();
                ProtectionDomain attackerPd = node.device().allocPd();
                MemoryRegion victim = victimPd.registerMemory(arena.allocate(LEN, 4096), REMOTE_RW);
                fill(victim.segment(), (byte) 0x5A);
                ProtectionDomain hostPd = host.device().allocPd();
                MemoryRegion buf = hostPd.registerMemory(arena.allocate(LEN, 4096), Access.LOCAL_WRITE);
                for (WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_READ, WrOpcode.RDMA_WRITE}) {
                    fill(buf.segment(), (byte) 0x11);
                    try (Link l = connect(host, listener, hostPd, attackerPd)) {
                        assertEquals(WcStatus.REM_ACCESS_ERR, rdma(l, op, buf, victim.address(), victim.rkey()),
                                op + " with the rkey of a region in another connection's protection domain");
                    }
                    assertAll(victim.segment(), (byte) 0x5A, op + ": victim region written");
                    assertAll(buf.segment(), (byte) 0x11, op + ": victim data read");
                }
                // the same rkey on the victim's own connection works: the refusal above was the domain check
                try (Link l = connect(host, listener, hostPd, victimPd)) {
                    assertEquals(WcStatus.SUCCESS, rdma(l, WrOpcode.RDMA_READ, buf, victim.address(), victim.rkey()));
                    assertAll(buf.segment(), (byte) 0x5A, "own connection read");
                }
            }
        });
    }

    @Test
    void shouldRefuseTheRkeyPredictedFromOneThePeerWasGiven() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (SoftVerbsProvider node = new SoftVerbsProvider(); SoftVerbsProvider host = new SoftVerbsProvider();
                 Arena arena = Arena.ofShared()) {
                CmListener listener = node.listen(new InetSocketAddress("127.0.0.1", 0), 4);
                // the node's design (Target.protectionDomain): one domain for every connection on the device
                ProtectionDomain shared = node.device().allocPd();
                MemoryRegion given = shared.registerMemory(arena.allocate(LEN, 4096), REMOTE_RW);
                MemoryRegion neighbour = shared.registerMemory(arena.allocate(LEN, 4096), REMOTE_RW);
                fill(neighbour.segment(), (byte) 0x5A);
                int r = given.rkey();
                int predicted = ((r >>> 8) + 1) << 8 | ((r + 1) & 0x7F) | 0x80; // next slot, next generation
                ProtectionDomain hostPd = host.device().allocPd();
                MemoryRegion buf = hostPd.registerMemory(arena.allocate(LEN, 4096), Access.LOCAL_WRITE);
                for (WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_READ, WrOpcode.RDMA_WRITE}) {
                    fill(buf.segment(), (byte) 0x11);
                    try (Link l = connect(host, listener, hostPd, shared)) {
                        assertEquals(WcStatus.REM_ACCESS_ERR, rdma(l, op, buf, neighbour.address(), predicted),
                                op + " with rkey 0x" + Integer.toHexString(predicted) + " derived from 0x"
                                        + Integer.toHexString(r));
                    }
                    assertAll(neighbour.segment(), (byte) 0x5A, op + ": neighbour region written");
                    assertAll(buf.segment(), (byte) 0x11, op + ": neighbour data read");
                }
            }
        });
    }

    @Test
    void shouldDrawUniqueNonZeroKeysWithNoVisibleSequence() {
        try (SoftVerbsProvider p = new SoftVerbsProvider(); Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = p.device().allocPd();
            MemorySegment seg = arena.allocate(64);
            Set<Integer> keys = new HashSet<>();
            Set<Integer> topBytes = new HashSet<>();
            int n = 2000;
            MemoryRegion previous = null;
            int steps = 0;
            for (int i = 0; i < n; i++) {
                MemoryRegion mr = pd.registerMemory(seg, Access.ALL);
                assertNotEquals(0, mr.lkey());
                assertNotEquals(0, mr.rkey());
                assertTrue(keys.add(mr.lkey()) && keys.add(mr.rkey()), "key drawn twice");
                topBytes.add(mr.rkey() >>> 24);
                if (previous != null && mr.rkey() - previous.rkey() == 0x101) {
                    steps++;
                }
                assertEquals(mr, p.device().byRkey(mr.rkey()));
                assertEquals(mr, p.device().byLkey(mr.lkey()));
                previous = mr;
            }
            assertEquals(0, steps, "rkeys that follow from the previous one");
            assertTrue(topBytes.size() > 200, "rkeys spread over the key space: " + topBytes.size() + " top bytes");
        }
    }
}
