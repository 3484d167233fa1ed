package io.rdmablock.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.VerbsTestSupport.Connection;
import io.rdmablock.rdma.verbs.VerbsTestSupport.Side;
import io.rdmablock.testing.Await;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Connection manager: private data, accept/reject, unreachable peers, disconnect events, provider selection. */
class ConnectionManagerTest {
    private static final String PROVIDERS = "io.rdmablock.rdma.verbs.VerbsTestSupport#providers";
    private static final long TIMEOUT_NS = VerbsTestSupport.TIMEOUT_NS;

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldExchangePrivateDataBothWays(String provider) {
        try (VerbsProvider p = Providers.select(provider);
             CmListener listener = p.listen(new InetSocketAddress(VerbsTestSupport.address(), 0), 4)) {
            byte[] request = new byte[CmId.MAX_PRIVATE_DATA];
            for (int i = 0; i < request.length; i++) {
                request[i] = (byte) (i + 1);
            }
            CmId cid = p.createId();
            cid.resolve(new InetSocketAddress(VerbsTestSupport.address(), listener.localAddress().getPort()),
                    TIMEOUT_NS);
            try (Side client = new Side(cid, 16, a -> { })) {
                CompletableFuture<Void> f = CompletableFuture.runAsync(() -> cid.connect(request, TIMEOUT_NS));
                CmId sid = listener.getRequest(TIMEOUT_NS);
                try (Side server = new Side(sid, 16, a -> { })) {
                    byte[] got = sid.privateData();
                    assertArrayEquals(request, java.util.Arrays.copyOf(got, request.length),
                            "connect private data (a transport may pad it)");
                    sid.accept(new byte[] {9, 8, 7}, TIMEOUT_NS);
                    f.get(10, TimeUnit.SECONDS);
                    byte[] reply = cid.privateData();
                    assertTrue(reply.length >= 3, "accept private data length " + reply.length);
                    assertArrayEquals(new byte[] {9, 8, 7}, java.util.Arrays.copyOf(reply, 3));
                    assertEquals(QpState.RTS, client.qp.state());
                    assertEquals(QpState.RTS, server.qp.state());
                    assertEquals("" + listener.localAddress().getPort(), "" + cid.remoteAddress().getPort());
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        }
    }

    /**
     * accept returns once the connection is established, whether or not the active side has sent anything (no
     * provider-private handshake a real peer would not take part in), and the accept private data arrives as given.
     * Then the NVMe-oF order: on iWARP the client's SEND comes first (RFC 5044: the passive side must not send
     * before it received a message), elsewhere the server may send first.
     */
    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldAcceptWithoutAnyMessageFromTheActiveSide(String provider) throws Exception {
        try (VerbsProvider p = Providers.select(provider);
             CmListener listener = p.listen(new InetSocketAddress(VerbsTestSupport.address(), 0), 4)) {
            CmId cid = p.createId();
            cid.resolve(new InetSocketAddress(VerbsTestSupport.address(), listener.localAddress().getPort()),
                    TIMEOUT_NS);
            try (Side client = new Side(cid, 16, a -> { })) {
                CompletableFuture<Void> f = CompletableFuture.runAsync(() -> cid.connect(null, TIMEOUT_NS));
                CmId sid = listener.getRequest(TIMEOUT_NS);
                try (Side server = new Side(sid, 16, a -> { })) {
                    MemoryRegion sbuf = server.register(4096, Access.LOCAL_WRITE);
                    MemoryRegion cbuf = client.register(4096, Access.LOCAL_WRITE);
                    server.qp.postRecv(VerbsTestSupport.recv(1, sbuf, 0, 64));
                    client.qp.postRecv(VerbsTestSupport.recv(2, cbuf, 0, 64));
                    byte[] reply = new byte[CmId.MAX_PRIVATE_DATA];
                    java.util.Arrays.fill(reply, (byte) 0x5A);
                    sid.accept(reply, TIMEOUT_NS); // the client posts nothing before this returns
                    f.get(TIMEOUT_NS, TimeUnit.NANOSECONDS);
                    byte[] got = cid.privateData();
                    assertArrayEquals(reply, java.util.Arrays.copyOf(got, reply.length));
                    DeviceContext.Transport t = client.id.device().transport();
                    if (t == DeviceContext.Transport.SOFT || t == DeviceContext.Transport.IWARP) { // IB CM pads
                        assertEquals(reply.length, got.length, "no trailer: exactly the bytes accept was given");
                    }
                    boolean clientFirst = client.id.device().transport() == DeviceContext.Transport.IWARP;
                    Side first = clientFirst ? client : server;
                    Side second = clientFirst ? server : client;
                    MemoryRegion firstBuf = clientFirst ? cbuf : sbuf;
                    MemoryRegion secondBuf = clientFirst ? sbuf : cbuf;
                    first.qp.postSend(VerbsTestSupport.send(10, WrOpcode.SEND, firstBuf, 1024, 64));
                    assertEquals(WcStatus.SUCCESS, first.next().status);
                    assertEquals(WcStatus.SUCCESS, second.next().status, "the first SEND arrived");
                    second.qp.postSend(VerbsTestSupport.send(11, WrOpcode.SEND, secondBuf, 1024, 16));
                    assertEquals(WcStatus.SUCCESS, second.next().status);
                    assertEquals(16, first.next().byteLen, "the answer arrived");
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRejectWithPrivateData(String provider) {
        try (VerbsProvider p = Providers.select(provider);
             CmListener listener = p.listen(new InetSocketAddress(VerbsTestSupport.address(), 0), 4)) {
            CmId cid = p.createId();
            cid.resolve(new InetSocketAddress(VerbsTestSupport.address(), listener.localAddress().getPort()),
                    TIMEOUT_NS);
            try (Side client = new Side(cid, 16, a -> { })) {
                CompletableFuture<Void> f = CompletableFuture.runAsync(() -> cid.connect(null, TIMEOUT_NS));
                CmId sid = listener.getRequest(TIMEOUT_NS);
                sid.reject(new byte[] {42, 43});
                Throwable t = assertThrows(Exception.class, () -> f.get(10, TimeUnit.SECONDS)).getCause();
                CmException e = (CmException) t;
                assertEquals(CmEventType.REJECTED, e.event(), e.getMessage());
                assertArrayEquals(new byte[] {42, 43}, java.util.Arrays.copyOf(e.privateData(), 2));
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldFailConnectToClosedPort(String provider) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, VerbsTestSupport.address())) {
            port = s.getLocalPort();
        }
        try (VerbsProvider p = Providers.select(provider)) {
            CmId cid = p.createId();
            cid.resolve(new InetSocketAddress(VerbsTestSupport.address(), port), TIMEOUT_NS);
            try (Side client = new Side(cid, 16, a -> { })) {
                long t0 = System.nanoTime();
                CmException e = assertThrows(CmException.class, () -> cid.connect(null, TIMEOUT_NS));
                // iWARP/soft: UNREACHABLE (ECONNREFUSED); IB/RoCE: REJECTED (no listener for the service id)
                assertTrue(e.event() == CmEventType.UNREACHABLE || e.event() == CmEventType.REJECTED,
                        "event " + e.event() + ": " + e.getMessage());
                assertTrue(System.nanoTime() - t0 < TIMEOUT_NS, "failed before the timeout");
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldFailResolveOfUnresolvableHost(String provider) {
        try (VerbsProvider p = Providers.select(provider)) {
            CmId cid = p.createId();
            CmException e = assertThrows(CmException.class, () -> cid.resolve(
                    InetSocketAddress.createUnresolved("no-such-host.invalid", 4420), TIMEOUT_NS));
            assertEquals(CmEventType.ADDR_ERROR, e.event(), e.getMessage());
            cid.close();
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRejectPrivateDataLongerThan56Bytes(String provider) {
        try (VerbsProvider p = Providers.select(provider);
             CmListener listener = p.listen(new InetSocketAddress(VerbsTestSupport.address(), 0), 4)) {
            CmId cid = p.createId();
            cid.resolve(new InetSocketAddress(VerbsTestSupport.address(), listener.localAddress().getPort()),
                    TIMEOUT_NS);
            try (Side client = new Side(cid, 16, a -> { })) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> cid.connect(new byte[57], TIMEOUT_NS));
                assertTrue(e.getMessage().contains("57"), e.getMessage());
                assertNull(listener.getRequest(TimeUnit.MILLISECONDS.toNanos(50)), "nothing was sent");
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldTimeOutGetRequestAndReturnNullAfterClose(String provider) {
        try (VerbsProvider p = Providers.select(provider)) {
            CmListener listener = p.listen(new InetSocketAddress(VerbsTestSupport.address(), 0), 4);
            assertNull(listener.getRequest(TimeUnit.MILLISECONDS.toNanos(20)));
            CompletableFuture<CmId> waiting = CompletableFuture.supplyAsync(
                    () -> listener.getRequest(TimeUnit.SECONDS.toNanos(10)));
            listener.close();
            long t0 = System.nanoTime();
            assertNull(waiting.join());
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "close released getRequest");
            listener.close();
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldReportDisconnectedOnBothSides(String provider) {
        try (Connection c = Connection.open(provider)) {
            assertNull(c.client.id.pollEvent(TimeUnit.MILLISECONDS.toNanos(10)));
            c.server.id.disconnect();
            assertEquals(CmEventType.DISCONNECTED, c.server.id.pollEvent(TIMEOUT_NS));
            assertEquals(CmEventType.DISCONNECTED, c.client.id.pollEvent(TIMEOUT_NS));
            assertEquals(QpState.ERROR, c.client.qp.state());
            c.server.id.disconnect(); // idempotent
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldReportDisconnectedToAZeroTimeoutPoll(String provider) throws InterruptedException {
        // pollers check for DISCONNECTED between rounds with pollEvent(0): it must read the channel, not just return
        try (Connection c = Connection.open(provider)) {
            assertNull(c.client.id.pollEvent(0), "nothing yet");
            c.server.id.disconnect();
            // polled without blocking, as the node's and the initiator's pollers do
            CmEventType seen = Await.value(() -> c.client.id.pollEvent(0), Objects::nonNull,
                    Duration.ofNanos(TIMEOUT_NS), "a CM event on the client after the server's disconnect");
            assertEquals(CmEventType.DISCONNECTED, seen);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldNameOneDevice(String provider) {
        try (VerbsProvider p = Providers.select(provider)) {
            assertEquals(provider, p.name());
            assertTrue(!p.deviceNames().isEmpty(), "devices: " + p.deviceNames());
        }
    }

    @Test
    void shouldExposeSoftDevice() {
        try (VerbsProvider p = Providers.select("soft")) {
            assertEquals(java.util.List.of("soft0"), p.deviceNames());
            CmId id = p.createId();
            id.resolve(new InetSocketAddress("127.0.0.1", 9), TIMEOUT_NS);
            assertEquals("soft0", id.device().name());
            assertEquals(DeviceContext.Transport.SOFT, id.device().transport());
            id.close();
        }
    }

    @Test
    void shouldNameValidModesForBogusProvider() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Providers.select("bogus"));
        assertEquals("invalid rdma.provider: 'bogus' (valid: auto, soft, ffm, memory)", e.getMessage());
    }
}
