package io.rdmablock.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.testing.Await;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Shared fixture of the verbs conformance suite. Written against the verbs API only, so every provider runs the same
 * tests: the providers come from system property {@code rdmablock.test.providers} (comma list, default {@code soft,memory}),
 * the IP address to listen on and connect to from {@code rdmablock.test.address} (default {@code 127.0.0.1}), the
 * bound of every wait for something that must happen from {@code rdmablock.test.timeoutSeconds} (default 10; the VM
 * runner raises it, since a TCG-emulated guest connecting 16 queue pairs can be that slow).
 */
public final class VerbsTestSupport {
    /** wrId of the test-only iWARP handshake WRITE ({@link Connection#clientSpeaksFirst}). */
    static final long HANDSHAKE_WR_ID = 0x4853_4B00L;
    private static final java.lang.invoke.VarHandle FLAG = ValueLayout.JAVA_LONG.varHandle();
    static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(Long.getLong("rdmablock.test.timeoutSeconds", 10));

    private VerbsTestSupport() {
    }

    /** Provider names for {@code @MethodSource}. */
    static Stream<String> providers() {
        return Arrays.stream(System.getProperty("rdmablock.test.providers", "soft,memory").split(","))
                .map(String::trim).filter(s -> !s.isEmpty());
    }

    static InetAddress address() {
        try {
            return InetAddress.getByName(System.getProperty("rdmablock.test.address", "127.0.0.1"));
        } catch (UnknownHostException e) {
            throw new IllegalStateException("bad rdmablock.test.address", e);
        }
    }

    // ---- what the device under test guarantees ----

    /** Transport of the connection's device ({@code SOFT} for the soft provider). */
    static DeviceContext.Transport transport(Connection c) {
        return c.client.id.device().transport();
    }

    /** True on an iWARP device (siw): no immediate data, no RNR, local completion before remote acceptance. */
    static boolean iwarp(Connection c) {
        return transport(c) == DeviceContext.Transport.IWARP;
    }

    /** True on the soft provider, which reports the exact local error of the IB spec (o10-2, section 10.10.3). */
    static boolean soft(Connection c) {
        return transport(c) == DeviceContext.Transport.SOFT;
    }

    /**
     * Asserts a local error completion: exactly {@code expected} on soft; on kernel devices also LOC_QP_OP_ERR, which
     * rxe (6.1 rxe_req.c/rxe_resp.c error paths) and siw (siw_qp_tx.c siw_qp_sq_process) report for any local fault.
     */
    static void assertLocalError(Connection c, WcStatus expected, WorkCompletion wc) {
        if (soft(c)) {
            assertEquals(expected, wc.status, wc.toString());
        } else {
            assertTrue(wc.status == expected || wc.status == WcStatus.LOC_QP_OP_ERR,
                    "expected " + expected + " or LOC_QP_OP_ERR: " + wc);
        }
    }

    /** True on the memory provider (device mem0): work executes when posted, so nothing is in flight. */
    static boolean memory(Connection c) {
        return "mem0".equals(c.client.id.device().name());
    }

    /** Waits (bounded by {@link #TIMEOUT_NS}) until {@code qp} reports {@code state}; fails otherwise. */
    static void awaitState(QueuePair qp, QpState state, String what) {
        Await.until(() -> qp.state() == state, Duration.ofNanos(TIMEOUT_NS), what + ": QP in " + state);
    }

    /**
     * iWARP: a fault the data sink detects is reported by a TERMINATE (RFC 5040 section 7) and the connection is
     * dropped (siw_qp_rx.c siw_qp_cm_drop), not by an error completion at the source. Waits (bounded) until one side
     * reports it: its QP in ERROR or a DISCONNECTED event.
     */
    static void awaitConnectionFailed(Connection c, String what) {
        Await.until(() -> failed(c.client) || failed(c.server), Duration.ofNanos(TIMEOUT_NS),
                what + ": either side in ERROR or DISCONNECTED");
    }

    private static boolean failed(Side s) {
        return s.qp.state() == QpState.ERROR || s.id.pollEvent(0) == CmEventType.DISCONNECTED;
    }

    static WorkCompletion copy(WorkCompletion w) {
        WorkCompletion c = new WorkCompletion();
        c.wrId = w.wrId;
        c.status = w.status;
        c.opcode = w.opcode;
        c.byteLen = w.byteLen;
        c.imm = w.imm;
        c.withImm = w.withImm;
        c.withInv = w.withInv;
        c.invalidatedRkey = w.invalidatedRkey;
        c.qpNum = w.qpNum;
        c.vendorErr = w.vendorErr;
        return c;
    }

    /** Fills {@code seg} with a pattern derived from {@code seed}. */
    static void fill(MemorySegment seg, long seed) {
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        long n = seg.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            seg.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i, x);
        }
        for (; i < n; i++) {
            seg.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (x >>> (8 * (i & 7))));
        }
    }

    static void assertSameBytes(MemorySegment expected, MemorySegment actual, String what) {
        assertEquals(expected.byteSize(), actual.byteSize(), what + ": size");
        long m = expected.mismatch(actual);
        assertEquals(-1L, m, what + ": first differing byte at offset " + m);
    }

    /** One end of a connection: id, PD, one CQ for send and receive, QP, and registered buffers. */
    public static final class Side implements AutoCloseable {
        public final CmId id;
        public final ProtectionDomain pd;
        public final CompletionQueue cq;
        public final QueuePair qp;
        final Arena arena = Arena.ofShared();
        private final WorkCompletion[] wcs = WorkCompletion.array(64);
        private final ArrayDeque<WorkCompletion> pending = new ArrayDeque<>();
        private final List<MemoryRegion> mrs = new ArrayList<>();

        Side(CmId id, int cqSize, Consumer<QpInitAttr> attrs) {
            this.id = id;
            DeviceContext dev = id.device();
            pd = dev.allocPd();
            cq = dev.createCq(cqSize);
            QpInitAttr a = new QpInitAttr().pd(pd).cq(cq);
            attrs.accept(a);
            qp = id.createQp(a);
        }

        public MemoryRegion register(long size, int access) {
            MemorySegment seg = arena.allocate(size, 4096);
            MemoryRegion mr = pd.registerMemory(seg, access);
            mrs.add(mr);
            return mr;
        }

        /** The next completion, waiting up to {@code timeoutNs}; null on timeout. */
        WorkCompletion next(long timeoutNs) {
            if (pending.isEmpty()) {
                long deadline = System.nanoTime() + timeoutNs;
                while (pending.isEmpty()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return null;
                    }
                    int n = cq.await(wcs, wcs.length, left);
                    for (int i = 0; i < n; i++) {
                        pending.add(copy(wcs[i]));
                    }
                }
            }
            return pending.poll();
        }

        WorkCompletion next() {
            WorkCompletion wc = next(TIMEOUT_NS);
            assertTrue(wc != null, "no completion within " + TIMEOUT_NS / 1_000_000 + " ms");
            return wc;
        }

        /** Exactly {@code n} completions (fails on timeout). */
        List<WorkCompletion> take(int n) {
            List<WorkCompletion> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(next());
            }
            return out;
        }

        /** Asserts that no completion arrives within {@code waitNs}. */
        void assertNoCompletion(long waitNs) {
            WorkCompletion wc = next(waitNs);
            assertEquals(null, wc, "unexpected completion");
        }

        @Override
        public void close() {
            id.close();
            for (MemoryRegion mr : mrs) {
                mr.close();
            }
            cq.close();
            pd.close();
            arena.close();
        }
    }

    /** A connected pair of queue pairs over one provider. */
    public static final class Connection implements AutoCloseable {
        final VerbsProvider provider;
        final CmListener listener;
        public final Side client;
        public final Side server;

        private Connection(VerbsProvider provider, CmListener listener, Side client, Side server) {
            this.provider = provider;
            this.listener = listener;
            this.client = client;
            this.server = server;
        }

        public static Connection open(String providerName) {
            return open(providerName, a -> { }, a -> { }, 256, s -> { });
        }

        /**
         * Connects a client to a server. {@code beforeAccept} runs on the server side after its QP exists and before
         * accept (to pre-post receives).
         */
        public static Connection open(String providerName, Consumer<QpInitAttr> clientAttrs,
                                      Consumer<QpInitAttr> serverAttrs, int cqSize, Consumer<Side> beforeAccept) {
            VerbsProvider provider = Providers.select(providerName);
            CmListener listener = null;
            Side client = null;
            Side server = null;
            try {
                listener = provider.listen(new InetSocketAddress(address(), 0), 8);
                CmId cid = provider.createId();
                cid.resolve(new InetSocketAddress(address(), listener.localAddress().getPort()), TIMEOUT_NS);
                Side c = new Side(cid, cqSize, clientAttrs);
                client = c;
                CompletableFuture<Void> connected = CompletableFuture.runAsync(
                        () -> c.id.connect(new byte[] {1, 2, 3}, TIMEOUT_NS));
                CmId sid = listener.getRequest(TIMEOUT_NS);
                assertTrue(sid != null, "no connect request");
                server = new Side(sid, cqSize, serverAttrs);
                beforeAccept.accept(server);
                server.id.accept(new byte[] {4, 5}, TIMEOUT_NS);
                connected.get(TIMEOUT_NS, TimeUnit.NANOSECONDS);
                if (c.id.device().transport() == DeviceContext.Transport.IWARP) {
                    clientSpeaksFirst(c, server);
                }
                return new Connection(provider, listener, client, server);
            } catch (Exception | AssertionError e) {
                closeAll(client, server, listener, provider);
                if (e instanceof RuntimeException r) {
                    throw r;
                }
                if (e instanceof AssertionError a) {
                    throw a;
                }
                throw new IllegalStateException(e);
            }
        }

        /**
         * iWARP (RFC 5044 MPA): the passive side must not send before it has received the active side's first
         * message (siw drops the connection otherwise). The providers do nothing private for that (a real peer, e.g.
         * a Linux nvme-rdma host, would not take part); NVMe-oF meets it by protocol, the host's Connect command comes
         * first. Tests whose server may send first get this test-only handshake instead: the client RDMA WRITEs 8
         * bytes into a server flag (signaled; its completion is consumed here, nothing else is posted yet) and the
         * server side waits until the flag is set.
         */
        static void clientSpeaksFirst(Side client, Side server) {
            MemoryRegion flag = server.register(64, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            MemoryRegion src = client.register(64, Access.LOCAL_WRITE);
            src.segment().set(ValueLayout.JAVA_LONG, 0, 1L);
            client.qp.postSend(rdma(HANDSHAKE_WR_ID, WrOpcode.RDMA_WRITE, src, 0, 8, flag, 0));
            WorkCompletion wc = client.next();
            assertEquals(WcStatus.SUCCESS, wc.status, "test handshake WRITE: " + wc);
            assertEquals(HANDSHAKE_WR_ID, wc.wrId, "test handshake WRITE: " + wc);
            long deadline = System.nanoTime() + TIMEOUT_NS;
            while ((long) FLAG.getVolatile(flag.segment(), 0L) == 0) {
                assertTrue(System.nanoTime() < deadline, "test handshake WRITE did not land at the server");
                java.util.concurrent.locks.LockSupport.parkNanos(20_000);
            }
        }

        private static void closeAll(AutoCloseable... cs) {
            for (AutoCloseable c : cs) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (Exception ignored) {
                        // best effort
                    }
                }
            }
        }

        @Override
        public void close() {
            closeAll(client, server, listener, provider);
        }
    }

    // ---- work-request helpers ----

    static RecvWr recv(long wrId, MemoryRegion mr, long offset, int length) {
        RecvWr r = new RecvWr();
        r.wrId = wrId;
        r.numSge = 1;
        r.sgList[0].set(mr, offset, length);
        return r;
    }

    static SendWr send(long wrId, WrOpcode op, MemoryRegion mr, long offset, int length) {
        SendWr w = new SendWr();
        w.wrId = wrId;
        w.opcode = op;
        w.sendFlags = SendWr.SIGNALED;
        w.numSge = 1;
        w.sgList[0].set(mr, offset, length);
        return w;
    }

    static SendWr rdma(long wrId, WrOpcode op, MemoryRegion local, long offset, int length, MemoryRegion remote,
                       long remoteOffset) {
        SendWr w = send(wrId, op, local, offset, length);
        w.remoteAddr = remote.address() + remoteOffset;
        w.rkey = remote.rkey();
        return w;
    }
}
