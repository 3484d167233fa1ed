package io.rdmablock.initiator;

import com.sun.net.httpserver.HttpServer;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.nvmf.host.AnaLog;
import io.rdmablock.nvmf.host.FakeTarget;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link VolumeLocator#open} against a stand-in management server (JDK HTTP server) and fake ANA targets: one copy
 * opens a plain {@link NvmeBlockDevice}, several a {@link MultipathDevice} that reports the lost primary and
 * connects a copy the re-read record newly lists.
 */
@Timeout(90)
class VolumeLocatorMultipathTest {
    static final String SUBNQN = Volume.subnqnOf("mp");
    static final long CAPACITY = 8L << 20;

    VerbsProvider provider;
    Arena arena;
    final List<FakeTarget> targets = new ArrayList<>();
    HttpServer http;
    volatile Volume record;
    final List<String> posts = new CopyOnWriteArrayList<>();
    MgmtClient mgmt;
    BlockDevice dev;

    @BeforeEach
    void setUp() throws Exception {
        provider = Providers.select("soft");
        arena = Arena.ofShared();
        http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        http.createContext("/v1/volumes/", ex -> {
            byte[] body;
            int code;
            if (ex.getRequestMethod().equals("GET")) {
                body = Json.write(record).getBytes(StandardCharsets.UTF_8);
                code = 200;
            } else {
                posts.add(ex.getRequestURI().getPath() + " " + new String(ex.getRequestBody().readAllBytes(),
                        StandardCharsets.UTF_8));
                body = "{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404}".getBytes(StandardCharsets.UTF_8);
                code = 404;
            }
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(code, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        http.start();
        mgmt = new MgmtClient(URI.create("http://127.0.0.1:" + http.getAddress().getPort()), null);
    }

    @AfterEach
    void tearDown() {
        if (dev != null) {
            dev.close();
        }
        http.stop(0);
        for (FakeTarget t : targets) {
            t.close();
        }
        arena.close();
        provider.close();
    }

    /** Starts a target over {@code store} and answers its fabric address {@code host:port}. */
    String target(MemorySegment store, int ana) {
        FakeTarget t = new FakeTarget(provider, SUBNQN, CAPACITY, store, 512, 128 << 10, true);
        t.anaState = ana;
        targets.add(t);
        return "127.0.0.1:" + t.start().getPort();
    }

    static Volume volume(long epoch, List<VolumeCopy> copies) {
        return new Volume("id-mp", "mp", CAPACITY, 512, copies.size(), List.of(), copies.getFirst().nodeId(),
                copies.getFirst().fabricAddress(), SUBNQN, 1, VolumeState.READY, List.of(), "2026-12-01T00:00:00Z",
                epoch, 1, copies);
    }

    DeviceOptions options() {
        return DeviceOptions.defaults().provider(provider).ioQueues(1).queueEntries(16).pathTimeoutMs(300)
                .failoverTimeoutMs(10_000).reconnectDelayMs(200).connectTimeoutMs(2000).keepAliveTimeoutMs(2000);
    }

    @Test
    void shouldOpenAPlainDeviceForOneCopy() {
        MemorySegment store = arena.allocate(CAPACITY, 4096);
        String a = target(store, 0);
        record = volume(1, List.of(new VolumeCopy("node-a", CopyRole.PRIMARY, CopyState.IN_SYNC, a)));
        dev = VolumeLocator.open(mgmt, "mp", null, options());
        assertInstanceOf(NvmeBlockDevice.class, dev);
    }

    @Test
    void shouldReportTheLostPrimaryAndConnectACopyTheRecordNowLists() throws Exception {
        MemorySegment store = arena.allocate(CAPACITY, 4096);
        String aAddr = target(store, AnaLog.OPTIMIZED);
        String bAddr = target(store, AnaLog.INACCESSIBLE);
        String cAddr = target(store, AnaLog.OPTIMIZED);
        FakeTarget a = targets.get(0);
        record = volume(3, List.of(
                new VolumeCopy("node-a", CopyRole.PRIMARY, CopyState.IN_SYNC, aAddr),
                new VolumeCopy("node-b", CopyRole.SECONDARY, CopyState.IN_SYNC, bAddr)));
        dev = VolumeLocator.open(mgmt, "mp", "nqn.2014-08.org.nvmexpress:uuid:locator", options());
        MultipathDevice mp = assertInstanceOf(MultipathDevice.class, dev);
        MemorySegment w = dev.allocateBuffer(4096);
        w.fill((byte) 7);
        dev.writeSync(0, w, false);
        a.cutLink();
        var f = dev.write(4096, w, true); // held: no Optimized path until the record lists node-c
        MultipathDeviceTest.waitFor("unreachable report", 10_000, () -> !posts.isEmpty());
        assertTrue(posts.getFirst().startsWith("/v1/volumes/mp/copies/node-a/unreachable "), posts.toString());
        assertTrue(posts.getFirst().contains("\"epoch\":3") && posts.getFirst().contains("uuid:locator"),
                posts.toString());
        record = volume(4, List.of(
                new VolumeCopy("node-c", CopyRole.PRIMARY, CopyState.IN_SYNC, cAddr),
                new VolumeCopy("node-b", CopyRole.SECONDARY, CopyState.IN_SYNC, bAddr),
                new VolumeCopy("node-a", CopyRole.SECONDARY, CopyState.STALE, aAddr)));
        f.get(15, TimeUnit.SECONDS);
        assertEquals(VolumeLocator.parseAddress(cAddr).getPort(), mp.activePath().address().getPort());
        MemorySegment back = dev.allocateBuffer(4096);
        dev.readSync(4096, back);
        assertEquals(-1, w.mismatch(back));
    }
}
