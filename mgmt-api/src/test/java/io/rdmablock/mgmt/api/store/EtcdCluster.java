package io.rdmablock.mgmt.api.store;

import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Real etcd processes for tests: {@code n} members of one cluster on loopback ports, data and logs in a directory
 * ({@code <dir>/m<i>/} and {@code <dir>/m<i>.log}), started with {@code --name m<i>} and {@code --initial-cluster}
 * naming all members. {@link #start} waits (bounded) until every member's {@code /health} says true; {@link #close()}
 * kills every process (also from a JVM shutdown hook, so a failed or aborted test leaves none behind).
 *
 * <p>The binary: {@code RDMABLOCK_ETCD_BIN}, default {@value #DEFAULT_BIN} (Debian's etcd-server, 3.4). Without it
 * {@link #assumeAvailable()} skips the test, unless {@code RDMABLOCK_REQUIRE_ETCD=1} (ops/test as root, after .ci/run
 * installed etcd-server): then it fails.
 */
public final class EtcdCluster implements AutoCloseable {
    /** Default etcd binary. */
    public static final String DEFAULT_BIN = "/usr/bin/etcd";
    /** Bound of a member's start (a loaded 2-core machine: etcd is up in about 1 s). */
    static final Duration START_BOUND = Duration.ofSeconds(45);

    private final Path dir;
    private final int size;
    private final int[] clientPorts;
    private final int[] peerPorts;
    private final String token = "rdmablock-test-" + UUID.randomUUID();
    private final Process[] processes;
    private final Thread hook;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    private EtcdCluster(Path dir, int size) throws IOException {
        this.dir = dir;
        this.size = size;
        this.clientPorts = new int[size];
        this.peerPorts = new int[size];
        this.processes = new Process[size];
        for (int i = 0; i < size; i++) {
            clientPorts[i] = freePort();
            peerPorts[i] = freePort();
        }
        this.hook = new Thread(this::killAll, "etcd-cluster-kill");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** @return the etcd binary */
    public static Path binary() {
        String bin = System.getenv("RDMABLOCK_ETCD_BIN");
        return Path.of(bin == null || bin.isBlank() ? DEFAULT_BIN : bin);
    }

    /**
     * Skips the calling test (JUnit assumption) when the etcd binary is absent; fails it instead when
     * {@code RDMABLOCK_REQUIRE_ETCD=1}.
     */
    public static void assumeAvailable() {
        Path bin = binary();
        if (Files.isExecutable(bin)) {
            return;
        }
        String why = bin + " is not installed (Debian: apt-get install etcd-server; or set RDMABLOCK_ETCD_BIN)";
        if ("1".equals(System.getenv("RDMABLOCK_REQUIRE_ETCD"))) {
            Assertions.fail("RDMABLOCK_REQUIRE_ETCD=1 but " + why);
        }
        Assumptions.abort("etcd tests skipped: " + why);
    }

    /**
     * Starts {@code size} members and waits until each is healthy. A start that fails (e.g. a port taken between
     * choosing and binding) is tried again on other ports, 3 times in all.
     *
     * @param dir  data and logs; must exist
     * @param size members, 1..7
     * @throws IllegalStateException when the cluster is not healthy within {@link #START_BOUND} (logs named)
     */
    public static EtcdCluster start(Path dir, int size) throws IOException, InterruptedException {
        if (size < 1 || size > 7) {
            throw new IllegalArgumentException("invalid size: size=" + size + ", min=1, max=7");
        }
        IllegalStateException last = null;
        for (int attempt = 1; attempt <= 3; attempt++) {
            Path attemptDir = Files.createDirectories(dir.resolve("etcd-" + attempt));
            var cluster = new EtcdCluster(attemptDir, size);
            try {
                for (int i = 0; i < size; i++) {
                    cluster.launch(i, "new");
                }
                for (int i = 0; i < size; i++) {
                    cluster.awaitHealthy(i, START_BOUND);
                }
                return cluster;
            } catch (IllegalStateException e) {
                cluster.close();
                last = e;
            } catch (IOException | InterruptedException | RuntimeException | Error e) {
                cluster.close();
                throw e;
            }
        }
        throw last;
    }

    /** @return number of members */
    public int size() {
        return size;
    }

    /** @return client URL of member {@code i}, {@code http://127.0.0.1:<port>} */
    public URI endpoint(int i) {
        return URI.create("http://127.0.0.1:" + clientPorts[i]);
    }

    /** @return client URLs of every member */
    public List<URI> endpoints() {
        var out = new ArrayList<URI>();
        for (int i = 0; i < size; i++) {
            out.add(endpoint(i));
        }
        return List.copyOf(out);
    }

    /** @return the endpoints comma-separated (the form of {@code --etcd-endpoints}) */
    public String endpointList() {
        return String.join(",", endpoints().stream().map(URI::toString).toList());
    }

    /** Stops member {@code i} (SIGKILL; its data stays) and waits up to 10 s for it to exit. */
    public synchronized void stop(int i) throws InterruptedException {
        Process p = processes[i];
        if (p != null) {
            p.destroyForcibly();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("etcd member m" + i + " (pid " + p.pid() + ") did not exit in 10 s");
            }
            processes[i] = null;
        }
    }

    /** Starts a stopped member {@code i} again on its data and waits until it is healthy. */
    public void restart(int i) throws IOException, InterruptedException {
        launch(i, "existing");
        awaitHealthy(i, START_BOUND);
    }

    /** Starts a stopped member without waiting (e.g. when the others are down too and it cannot be healthy alone). */
    public void restartNoWait(int i) throws IOException {
        launch(i, "existing");
    }

    /** Waits until member {@code i} answers {@code /health} with true. */
    public void awaitHealthy(int i, Duration bound) throws InterruptedException {
        String[] last = {"no answer"};
        try {
            Await.until(() -> {
                Process p;
                synchronized (this) {
                    p = processes[i];
                }
                if (p == null || !p.isAlive()) {
                    throw new IllegalStateException("etcd member m" + i + " exited"
                            + (p == null ? "" : " with " + p.exitValue()) + "; log: " + log(i) + "\n" + tail(i));
                }
                try {
                    var response = http.send(HttpRequest.newBuilder(endpoint(i).resolve("/health"))
                            .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                    last[0] = response.statusCode() + " " + response.body();
                    return response.statusCode() == 200 && response.body().contains("\"true\"");
                } catch (IOException e) {
                    last[0] = e.toString();
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted waiting for etcd member m" + i, e);
                }
            }, bound, "etcd member m" + i + " healthy");
        } catch (AssertionError e) {
            if (Thread.interrupted()) {
                throw new InterruptedException(e.getMessage());
            }
            throw new IllegalStateException("etcd member m" + i + " not healthy within " + bound.toSeconds()
                    + " s (last: " + last[0] + "); log: " + log(i) + "\n" + tail(i));
        }
    }

    /**
     * @return index of the member that is raft leader now, from the members' {@code /v3/maintenance/status} (etcd's
     *         gRPC gateway: {@code header.member_id} and {@code leader}); -1 when no running member names a leader
     */
    public int leaderIndex() throws InterruptedException {
        String leader = null;
        var ids = new String[size];
        for (int i = 0; i < size; i++) {
            synchronized (this) {
                if (processes[i] == null) {
                    continue;
                }
            }
            try {
                var response = http.send(HttpRequest.newBuilder(endpoint(i).resolve("/v3/maintenance/status"))
                        .timeout(Duration.ofSeconds(2)).POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                        HttpResponse.BodyHandlers.ofString());
                ids[i] = field(response.body(), "member_id");
                String l = field(response.body(), "leader");
                if (l != null && !"0".equals(l)) {
                    leader = l;
                }
            } catch (IOException e) {
                // not answering: not the leader
            }
        }
        for (int i = 0; i < size; i++) {
            if (leader != null && leader.equals(ids[i])) {
                return i;
            }
        }
        return -1;
    }

    private static String field(String json, String name) {
        var m = java.util.regex.Pattern.compile("\"" + name + "\"\\s*:\\s*\"?([0-9]+)").matcher(json);
        return m.find() ? m.group(1) : null;
    }

    /** @return member i's log file */
    public Path log(int i) {
        return dir.resolve("m" + i + ".log");
    }

    private String tail(int i) {
        try {
            List<String> lines = Files.readAllLines(log(i));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private synchronized void launch(int i, String state) throws IOException {
        if (processes[i] != null && processes[i].isAlive()) {
            throw new IllegalStateException("etcd member m" + i + " is running");
        }
        var initial = new StringBuilder();
        for (int m = 0; m < size; m++) {
            initial.append(m == 0 ? "" : ",").append("m").append(m).append("=http://127.0.0.1:").append(peerPorts[m]);
        }
        String client = "http://127.0.0.1:" + clientPorts[i];
        String peer = "http://127.0.0.1:" + peerPorts[i];
        var command = List.of(binary().toString(),
                "--name", "m" + i,
                "--data-dir", dir.resolve("m" + i).toString(),
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", initial.toString(),
                "--initial-cluster-state", state,
                "--initial-cluster-token", token,
                "--heartbeat-interval", "100", "--election-timeout", "1000",
                "--logger", "zap", "--log-outputs", "stderr");
        processes[i] = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log(i).toFile()))
                .start();
    }

    private static int freePort() throws IOException {
        try (var socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private synchronized void killAll() {
        for (int i = 0; i < size; i++) {
            Process p = processes[i];
            if (p != null) {
                p.destroyForcibly();
            }
        }
        for (int i = 0; i < size; i++) {
            Process p = processes[i];
            if (p != null) {
                try {
                    p.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                processes[i] = null;
            }
        }
    }

    /** Kills every member (SIGKILL) and waits for them. Idempotent. */
    @Override
    public void close() {
        killAll();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway
        }
    }
}
