package io.rdmablock.e2e;

import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Opt-in chaos run ({@code -Drdmablock.chaos=true [-Drdmablock.chaos.seconds=60 -Drdmablock.chaos.seed=N]}): QD32
 * writes and reads against a node in a separate process that is stopped (SIGSTOP/SIGCONT) or killed (SIGKILL, then
 * restarted) at random points. Every future must complete within commandTimeoutMs + ctrlLossTimeoutMs + slack, and
 * a read of a block whose last write succeeded (and was flushed before any kill) returns that write's data.
 * Soft provider only (the child node is started with {@code --provider soft}): not tagged {@code rdma-e2e}.
 */
@Timeout(900)
class NodeChaosE2eTest {
    static final int QD = 32;
    static final int BLOCK = 4096;
    static final int CHUNK_BLOCKS = 16;
    static final int CHUNKS = 1024;
    static final long CMD_TIMEOUT_MS = 1500;
    static final long CTRL_LOSS_MS = 4000;
    /** Bound of any future: a command timeout, then a full loss window, plus setup steps and slack. */
    static final long BOUND_MS = CMD_TIMEOUT_MS + CTRL_LOSS_MS + 4 * 1000 + 5000;

    @TempDir
    Path dir;
    Process child;
    int port;

    @AfterEach
    void tearDown() throws Exception {
        if (child != null) {
            signal("CONT");
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void everyFutureCompletesWhileTheNodeIsStoppedAndKilled() throws Exception {
        Assumptions.assumeTrue(Boolean.getBoolean("rdmablock.chaos"), "opt-in: -Drdmablock.chaos=true");
        long seconds = Long.getLong("rdmablock.chaos.seconds", 60);
        long seed = Long.getLong("rdmablock.chaos.seed", System.nanoTime());
        System.out.println("chaos seed " + seed);
        Random rnd = new Random(seed);
        port = freePort();
        startChild();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        int rounds = 0;
        while (System.nanoTime() - end < 0 && rounds < 200) {
            rounds++;
            if (!child.isAlive()) {
                startChild();
            }
            NvmeBlockDevice d = openWhenUp();
            try {
                round(d, rnd);
            } finally {
                long t0 = System.nanoTime();
                d.close();
                long ms = (System.nanoTime() - t0) / 1_000_000;
                if (ms > 10_000) {
                    fail("close() took " + ms + " ms");
                }
            }
        }
        System.out.println("chaos rounds " + rounds);
    }

    /** One device lifetime: I/O while one fault (stop, kill, or none) hits at a random moment. */
    private void round(NvmeBlockDevice d, Random rnd) throws Exception {
        MemorySegment[] bufs = new MemorySegment[QD];
        @SuppressWarnings("unchecked")
        CompletableFuture<Void>[] fs = new CompletableFuture[QD];
        long[] issuedNs = new long[QD];
        int[] chunkOf = new int[QD];
        boolean[] isRead = new boolean[QD];
        long[] version = new long[CHUNKS]; // version written by the last successful write; -1 unknown
        java.util.Arrays.fill(version, -1);
        long[] writing = new long[QD];
        for (int s = 0; s < QD; s++) {
            bufs[s] = rnd.nextBoolean() ? d.allocateBuffer((long) CHUNK_BLOCKS * BLOCK)
                    : java.lang.foreign.Arena.ofAuto().allocate((long) CHUNK_BLOCKS * BLOCK, BLOCK);
        }
        int fault = rnd.nextInt(4); // 0 none, 1 stop short, 2 stop long, 3 kill
        long faultAtNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(rnd.nextInt(1500));
        long faultDone = 0;
        long roundEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(4000 + rnd.nextInt(4000));
        long seq = 0;
        boolean faulted = false;
        while (true) {
            long now = System.nanoTime();
            if (!faulted && now - faultAtNs >= 0) {
                faulted = true;
                switch (fault) {
                    case 1 -> {
                        signal("STOP");
                        faultDone = now + TimeUnit.MILLISECONDS.toNanos(200 + rnd.nextInt(1500));
                    }
                    case 2 -> {
                        signal("STOP");
                        faultDone = now + TimeUnit.MILLISECONDS.toNanos(CTRL_LOSS_MS + CMD_TIMEOUT_MS + rnd.nextInt(2000));
                    }
                    case 3 -> {
                        child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                        java.util.Arrays.fill(version, -1); // unflushed writes may be gone
                        faultDone = now + TimeUnit.MILLISECONDS.toNanos(rnd.nextInt(3000));
                    }
                    default -> {
                    }
                }
                System.out.println("fault " + fault);
            }
            if (faultDone != 0 && now - faultDone >= 0) {
                faultDone = 0;
                if (fault == 3) {
                    startChild();
                } else {
                    signal("CONT");
                }
            }
            boolean stop = now - roundEnd >= 0 && faultDone == 0;
            boolean idle = true;
            for (int s = 0; s < QD; s++) {
                CompletableFuture<Void> f = fs[s];
                if (f != null) {
                    if (!f.isDone()) {
                        long ageMs = (now - issuedNs[s]) / 1_000_000;
                        if (ageMs > BOUND_MS) {
                            fail("future of slot " + s + " (" + (isRead[s] ? "read" : "write") + " chunk "
                                    + chunkOf[s] + ") not complete after " + ageMs + " ms; state=" + d.state()
                                    + ", loss=" + d.lossReason() + "\n" + threads());
                        }
                        idle = false;
                        continue;
                    }
                    fs[s] = null;
                    boolean ok = !f.isCompletedExceptionally();
                    int c = chunkOf[s];
                    if (isRead[s]) {
                        if (ok && version[c] >= 0) {
                            long got = bufs[s].get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
                            for (long off = 0; off < bufs[s].byteSize(); off += BLOCK) {
                                long v = bufs[s].get(ValueLayout.JAVA_LONG_UNALIGNED, off);
                                if (v != got) {
                                    fail("torn read of chunk " + c + " at " + off + ": " + v + " vs " + got);
                                }
                            }
                            assertEquals(version[c], got, "chunk " + c + " reads its last successful write");
                        }
                    } else {
                        version[c] = ok ? writing[s] : -1;
                    }
                }
                if (stop) {
                    continue;
                }
                // slot s owns chunks s, s + QD, ...: no two commands on one chunk at a time
                int c = s + QD * rnd.nextInt(CHUNKS / QD);
                chunkOf[s] = c;
                isRead[s] = rnd.nextInt(3) == 0;
                if (isRead[s]) {
                    fs[s] = d.read((long) c * CHUNK_BLOCKS * BLOCK, bufs[s]);
                } else {
                    long v = ((long) c << 32) | ++seq;
                    writing[s] = v;
                    for (long off = 0; off < bufs[s].byteSize(); off += 8) {
                        bufs[s].set(ValueLayout.JAVA_LONG_UNALIGNED, off, v);
                    }
                    version[c] = -1; // in flight
                    fs[s] = d.write((long) c * CHUNK_BLOCKS * BLOCK, bufs[s], false);
                }
                issuedNs[s] = System.nanoTime();
                idle = false;
            }
            if (stop && idle) {
                return;
            }
            Thread.sleep(1); // the load loop's pause between two sweeps over its QD futures, not a wait
        }
    }

    private NvmeBlockDevice openWhenUp() throws Exception {
        RuntimeException[] last = {null};
        try {
            return Await.value(() -> {
                try {
                    return NvmeBlockDevice.open(new InetSocketAddress(NodeFixtures.host(), port),
                            NodeFixtures.subnqn("chaos"), null,
                            DeviceOptions.defaults().providerMode("soft").connectTimeoutMs(1000)
                                    .commandTimeoutMs(CMD_TIMEOUT_MS).reconnectDelayMs(200)
                                    .ctrlLossTimeoutMs(CTRL_LOSS_MS).keepAliveTimeoutMs(1000));
                } catch (RuntimeException e) {
                    last[0] = e;
                    return null;
                }
            }, java.util.Objects::nonNull, Duration.ofSeconds(60), "the child node's listener up (a device open)");
        } catch (AssertionError e) {
            if (last[0] != null) {
                last[0].addSuppressed(e);
                throw last[0];
            }
            throw e;
        }
    }

    private void startChild() throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        Path data = dir.resolve("node");
        Files.createDirectories(data);
        child = new ProcessBuilder(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp",
                NodeFixtures.childClasspath(), "io.rdmablock.node.NodeMain", "--data-dir", data.toString(), "--listen",
                NodeFixtures.host() + ":" + port, "--provider", "soft", "--create-volume", "chaos:64M:4096:*"))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("node.log").toFile())).start();
    }

    private void signal(String sig) throws Exception {
        if (child != null && child.isAlive()) {
            new ProcessBuilder("kill", "-" + sig, Long.toString(child.pid())).inheritIO().start()
                    .waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String threads() {
        StringBuilder b = new StringBuilder();
        Thread.getAllStackTraces().forEach((t, st) -> {
            if (t.getName().startsWith("rdmablock")) {
                b.append(t).append('\n');
                for (StackTraceElement e : st) {
                    b.append("    at ").append(e).append('\n');
                }
            }
        });
        return b.toString();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
