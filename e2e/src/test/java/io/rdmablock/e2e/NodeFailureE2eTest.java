package io.rdmablock.e2e;

import io.rdmablock.initiator.AssociationState;
import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceChecks;
import io.rdmablock.initiator.DeviceLostException;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.initiator.NvmeStatusException;
import io.rdmablock.node.StorageNode;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Losing the node: C6 (link cut during QD32 random writes; (a) restored within the reconnect window, (b) never)
 * with short timeouts, and C15 with the node in a separate process killed with SIGKILL after a FLUSH.
 */
@Tag("rdma-e2e")
@Timeout(180)
class NodeFailureE2eTest {
    static final int CHUNK = 64 << 10;
    static final int CHUNKS = 512;
    @TempDir
    Path dir;
    StorageNode node;
    Process child;
    Path childLog;
    final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
        if (node != null) {
            node.close();
        }
        if (child != null) {
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Writes chunks at QD32 until stopped: slot s owns chunks s, s+32, ...; versions[chunk] is the last submitted. */
    static Thread writer(BlockDevice d, int[] versions, AtomicBoolean stop, AtomicReference<Throwable> failure) {
        return Thread.ofPlatform().name("c6-writer").start(() -> {
            int qd = 32;
            MemorySegment[] bufs = new MemorySegment[qd];
            @SuppressWarnings("unchecked")
            CompletableFuture<Void>[] fs = new CompletableFuture[qd];
            int[] next = new int[qd];
            try {
                for (int s = 0; s < qd; s++) {
                    bufs[s] = d.allocateBuffer(CHUNK);
                    next[s] = s;
                }
                int s = 0;
                long ops = 0;
                while (!stop.get() && ops < 200_000) {
                    if (fs[s] != null) {
                        fs[s].get(60, TimeUnit.SECONDS);
                    }
                    int chunk = next[s];
                    next[s] = (chunk + qd) % CHUNKS;
                    int v = ++versions[chunk];
                    fillChunk(bufs[s], chunk, v);
                    fs[s] = d.write((long) chunk * CHUNK, bufs[s], false);
                    s = (s + 1) % qd;
                    ops++;
                }
                for (CompletableFuture<Void> f : fs) {
                    if (f != null) {
                        f.get(60, TimeUnit.SECONDS);
                    }
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        });
    }

    static void fillChunk(MemorySegment buf, int chunk, int version) {
        int[] versions = {version};
        // one "block" of CHUNK bytes, version base = chunk
        DeviceChecks.fill(buf, chunk, CHUNK, versions, chunk);
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldResumeAndVerifyWhenNodeReturnsWithinReconnectWindow(String provider) throws Exception {
        node = NodeFixtures.startNode(dir, provider, 0);
        node.createVolume("c6a", (long) CHUNKS * CHUNK, 4096, Set.of("*"));
        int port = node.fabricAddress().getPort();
        NvmeBlockDevice d = NodeFixtures.open(node, provider, "c6a", DeviceOptions.defaults().keepAliveTimeoutMs(1000)
                .reconnectDelayMs(500).ctrlLossTimeoutMs(15_000));
        toClose.add(d);
        int[] versions = new int[CHUNKS];
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread w = writer(d, versions, stop, failure);
        waitUntil(() -> sum(versions) > 200, 20_000, "200 chunk writes before the node goes");
        node.close();
        node = null;
        Thread.sleep(1500); // the link stays down this long: the scenario, not a synchronisation
        node = NodeFixtures.startNode(dir, provider, port);
        int before = sum(versions);
        waitUntil(() -> sum(versions) > before + 200, 30_000, "200 chunk writes after the node is back");
        stop.set(true);
        w.join(90_000);
        assertNull(failure.get());
        // the counter is bumped by the controller thread just after the queues are attached: I/O may finish first
        waitUntil(() -> d.reconnects() >= 1, 10_000, "the device counted its reconnect");
        MemorySegment r = d.allocateBuffer(CHUNK);
        for (int c = 0; c < CHUNKS; c++) {
            d.readSync((long) c * CHUNK, r);
            if (versions[c] == 0) {
                continue;
            }
            assertNull(DeviceChecks.verify(r, c, CHUNK, new int[]{versions[c]}, c), "chunk " + c);
        }
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldFailEveryOutstandingIoWhenNodeNeverReturns(String provider) throws Exception {
        node = NodeFixtures.startNode(dir, provider, 0);
        node.createVolume("c6b", 16L << 20, 4096, Set.of("*"));
        long katoMs = 1000;
        long lossMs = 2000;
        NvmeBlockDevice d = NodeFixtures.open(node, provider, "c6b", DeviceOptions.defaults().keepAliveTimeoutMs(katoMs)
                .reconnectDelayMs(500).ctrlLossTimeoutMs(lossMs));
        toClose.add(d);
        MemorySegment b = d.allocateBuffer(1 << 20);
        List<CompletableFuture<Void>> fs = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            fs.add(d.write((long) (i % 16) << 20, b, false));
        }
        node.close(); // tearing down the node's queues takes seconds on a TCG-emulated rxe/siw: not part of the bound
        node = null;
        long t0 = System.nanoTime();
        for (int i = 0; i < 32; i++) {
            fs.add(d.write((long) (i % 16) << 20, b, false));
        }
        int lost = 0;
        for (CompletableFuture<Void> f : fs) {
            try {
                f.get(lossMs + katoMs + 10_000, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                assertInstanceOf(DeviceLostException.class, e.getCause());
                lost++;
            }
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(lost >= 32, "the writes issued after the cut failed: lost=" + lost);
        assertTrue(ms <= lossMs + katoMs + 2000, "failed within ctrlLoss + kato (+2 s slack): " + ms + " ms");
        assertThrows(DeviceLostException.class, () -> d.writeSync(0, b.asSlice(0, 4096), false));
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldFailAtOnceWhenVolumeIsDeletedUnderTheHost(String provider) throws Exception {
        // volume delete --force: every reconnect's Connect is rejected with DNR=1; no waiting for ctrlLossTimeoutMs
        node = NodeFixtures.startNode(dir, provider, 0);
        node.createVolume("gone", 16L << 20, 4096, Set.of("*"));
        NvmeBlockDevice d = NodeFixtures.open(node, provider, "gone", DeviceOptions.defaults().keepAliveTimeoutMs(1000)
                .reconnectDelayMs(200).ctrlLossTimeoutMs(60_000));
        toClose.add(d);
        MemorySegment b = d.allocateBuffer(4096);
        d.writeSync(0, b, false);
        long t0 = System.nanoTime();
        node.target().removeVolume("gone");
        node.store().delete("gone");
        // a write racing the teardown may still reach the old controller and fail there with the store's status;
        // once the association is gone, the reconnect's DNR=1 reject must end the device
        Throwable cause;
        do {
            CompletableFuture<Void> f = d.write(0, b, false);
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
            cause = e.getCause();
            assertTrue(cause instanceof DeviceLostException || cause instanceof NvmeStatusException, cause.toString());
        } while (!(cause instanceof DeviceLostException) && System.nanoTime() - t0 < 15_000_000_000L);
        assertInstanceOf(DeviceLostException.class, cause);
        assertTrue(cause.getMessage().contains("dnr=true"), cause.getMessage());
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 15_000, "failed long before ctrlLossTimeoutMs=60000: " + ms + " ms");
        assertThrows(DeviceLostException.class, () -> d.writeSync(0, b, false));
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldKeepRetryingWhileARestartedNodeHasNotYetExportedTheVolume(String provider) throws Exception {
        // a restarting node listens before its subsystems exist: its DNR=1 rejects are retried for a grace period
        node = NodeFixtures.startNode(dir.resolve("a"), provider, 0);
        node.createVolume("late", 16L << 20, 4096, Set.of("*"));
        int port = node.fabricAddress().getPort();
        NvmeBlockDevice d = NodeFixtures.open(node, provider, "late", DeviceOptions.defaults().keepAliveTimeoutMs(1000)
                .reconnectDelayMs(200).ctrlLossTimeoutMs(30_000));
        toClose.add(d);
        MemorySegment b = d.allocateBuffer(4096);
        d.writeSync(0, b, false);
        node.close();
        node = null;
        waitUntil(() -> d.state() == AssociationState.RECONNECTING, 10_000, "the association RECONNECTING");
        Thread.sleep(1000); // node down this long (refused connects): the scenario, not a synchronisation
        node = NodeFixtures.startNode(dir.resolve("b"), provider, port);
        Thread.sleep(1500); // the node is up without the volume this long (rejects with DNR=1): the scenario
        assertNull(d.lossReason(), "still reconnecting within the restart grace");
        node.createVolume("late", 16L << 20, 4096, Set.of("*"));
        d.write(0, b, false).get(20, TimeUnit.SECONDS);
        // the counter is bumped by the controller thread just after the queues are attached: I/O may finish first
        waitUntil(() -> d.reconnects() >= 1, 10_000, "the device counted its reconnect");
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldKeepFlushedDataWhenSeparateNodeProcessIsKilled(String provider) throws Exception {
        // C15 with the node as a separate process (also the separate-process end-to-end test)
        int port = freePort();
        Path data = dir.resolve("node15");
        child = startChild(provider, data, port, dir.resolve("node15-1.log"));
        String nqn = NodeFixtures.subnqn("c15");
        InetSocketAddress addr = new InetSocketAddress(NodeFixtures.host(), port);
        NvmeBlockDevice d = openWhenUp(addr, nqn, provider);
        MemorySegment a = DeviceChecks.pattern(java.lang.foreign.Arena.global().allocate(4 << 20, 4096), 15);
        MemorySegment b = DeviceChecks.pattern(java.lang.foreign.Arena.global().allocate(4 << 20, 4096), 16);
        d.writeSync(0, a, false); // through the bounce path
        d.flushSync();
        d.writeSync(8 << 20, b, false); // never flushed
        child.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL
        d.close();
        child = startChild(provider, data, port, dir.resolve("node15-2.log"));
        NvmeBlockDevice d2 = openWhenUp(addr, nqn, provider);
        MemorySegment r = d2.allocateBuffer(4 << 20);
        d2.readSync(0, r);
        assertEquals(-1, a.mismatch(r), "flushed data survives kill -9");
        d2.readSync(8 << 20, r);
        for (long off = 0; off < r.byteSize(); off += 4096) {
            MemorySegment got = r.asSlice(off, 4096);
            boolean isNew = got.mismatch(b.asSlice(off, 4096)) == -1;
            boolean isOld = got.mismatch(MemorySegment.ofArray(new byte[4096])) == -1;
            assertTrue(isNew || isOld, "block at " + off + " is torn");
        }
    }

    private NvmeBlockDevice openWhenUp(InetSocketAddress addr, String nqn, String provider) throws Exception {
        // 60 s for a child JVM to come up, 180 s under the VM runner (rdmablock.test.timeoutSeconds=30: TCG)
        long waitS = Long.getLong("rdmablock.test.timeoutSeconds", 10);
        RuntimeException[] last = {null};
        try {
            NvmeBlockDevice d = Await.value(() -> {
                if (!child.isAlive()) {
                    throw new IllegalStateException("node process exited: " + child.exitValue() + "; its log ends:\n"
                            + tail(childLog, 40));
                }
                try {
                    return NvmeBlockDevice.open(addr, nqn, null,
                            DeviceOptions.defaults().providerMode(provider).connectTimeoutMs(200 * waitS));
                } catch (RuntimeException e) {
                    last[0] = e;
                    return null;
                }
            }, java.util.Objects::nonNull, Duration.ofSeconds(6 * waitS),
                    "the child node's listener up (a device open)");
            toClose.add(d);
            return d;
        } catch (AssertionError e) {
            if (last[0] != null) {
                last[0].addSuppressed(e);
                throw last[0];
            }
            throw e;
        }
    }

    private Process startChild(String provider, Path data, int port, Path log) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                NodeFixtures.childClasspath(), "io.rdmablock.node.NodeMain", "--data-dir", data.toString(),
                "--listen", NodeFixtures.host() + ":" + port, "--provider", provider, "--create-volume", "c15:64M:4096:*");
        Files.createDirectories(data);
        childLog = log;
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(" + log + " unreadable: " + e + ")";
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static int sum(int[] a) {
        int n = 0;
        for (int v : a) {
            n += v;
        }
        return n;
    }

    private static void waitUntil(java.util.function.BooleanSupplier cond, long ms, String what) {
        Await.until(cond, Duration.ofMillis(ms), what);
    }
}
