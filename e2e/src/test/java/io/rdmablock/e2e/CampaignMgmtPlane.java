package io.rdmablock.e2e;

import io.rdmablock.mgmt.api.store.EtcdCluster;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.testing.Await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The highly available management plane of {@link FailoverCampaign} {@code --etcd E --mgmt M} (docs/chaos.md,
 * docs/ha.md): a real E-member etcd cluster ({@link EtcdCluster}, Debian's etcd-server) and M management servers as
 * separate processes of {@code rdmablock mgmt} ({@code io.rdmablock.cli.RdmablockCli}; the script puts ops/dist on
 * the classpath), all on that etcd. Server {@code i} (0-based) listens on a port fixed for the plane's life on
 * {@code host}, keeps its data in {@code <dir>/mgmt<i+1>} and logs to {@code <dir>/mgmt<i+1>.log}, so it can be
 * killed with SIGKILL and started again at the same URL. Every wait is bounded.
 */
final class CampaignMgmtPlane implements AutoCloseable {
    /** Main class of the {@code rdmablock} CLI (ops/dist). */
    static final String CLI_MAIN = "io.rdmablock.cli.RdmablockCli";
    /** Bound of one server's start (JVM start, etcd connect, /health), s. */
    static final int START_S = 120;

    private final Path dir;
    private final String host;
    private final String token;
    private final EtcdCluster etcd;
    /** The main class of the servers: the CLI when on the classpath, else {@link PlaneServerMain}. */
    private final String serverMain;
    private final int[] ports;
    private final Process[] servers;
    private final List<String> serverArgs;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /**
     * Starts the etcd members, then the servers, and waits until every server answers {@code /health}.
     *
     * @param etcdMembers   etcd members, 1..7
     * @param servers       management servers, 2..5
     * @param host          the servers' listen host (the nodes must reach it)
     * @param token         the cluster token
     * @param nodeTimeoutMs the servers' {@code --node-timeout-ms}
     * @param leaseMs       the servers' {@code --lease-ms}
     * @throws IllegalStateException when etcd is not installed, or a server does
     *                               not start within {@value #START_S} s (its log tail named)
     */
    CampaignMgmtPlane(Path dir, int etcdMembers, int servers, String host, String token, long nodeTimeoutMs,
                      long leaseMs) throws IOException, InterruptedException {
        checkSizes(etcdMembers, servers);
        if (!Files.isExecutable(EtcdCluster.binary())) {
            throw new IllegalStateException(EtcdCluster.binary() + " is not installed (Debian: apt-get install "
                    + "etcd-server; or set RDMABLOCK_ETCD_BIN)");
        }
        String main;
        try {
            Class.forName(CLI_MAIN, false, CampaignMgmtPlane.class.getClassLoader());
            main = CLI_MAIN;
        } catch (ClassNotFoundException e) {
            main = PlaneServerMain.class.getName(); // under Maven in this module: the same server, its own main
        }
        this.serverMain = main;
        this.dir = dir;
        this.host = host;
        this.token = token;
        this.etcd = EtcdCluster.start(Files.createDirectories(dir.resolve("etcd")), etcdMembers);
        this.ports = new int[servers];
        this.servers = new Process[servers];
        var args = new ArrayList<>(List.of("--node-timeout-ms", Long.toString(nodeTimeoutMs), "--lease-ms",
                Long.toString(leaseMs), "--etcd-endpoints", etcd.endpointList()));
        if (NodeCluster.labPlaintextSecrets(host)) {
            args.add("--allow-plaintext-secrets"); // nodes in namespaces, plain HTTP: their node keys all the same
        }
        this.serverArgs = List.copyOf(args);
        try {
            for (int i = 0; i < servers; i++) {
                try (java.net.ServerSocket probe = new java.net.ServerSocket(0)) {
                    ports[i] = probe.getLocalPort();
                }
            }
            for (int i = 0; i < servers; i++) {
                start(i);
            }
            for (int i = 0; i < servers; i++) {
                awaitHealthy(i, START_S);
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** @throws IllegalArgumentException unless etcd is 1..7 members and servers 2..5 */
    static void checkSizes(int etcdMembers, int servers) {
        if (etcdMembers < 1 || etcdMembers > 7) {
            throw new IllegalArgumentException("invalid --etcd: --etcd=" + etcdMembers + ", min=1, max=7");
        }
        if (servers < 2 || servers > 5) {
            throw new IllegalArgumentException("invalid --mgmt: --mgmt=" + servers + ", min=2, max=5 (with --etcd)");
        }
    }

    /** @return server {@code i}'s base URL, {@code http://host:port} */
    String url(int i) {
        return "http://" + host + ":" + ports[i];
    }

    /** @return every server's URL in order */
    List<String> urls() {
        List<String> all = new ArrayList<>();
        for (int i = 0; i < ports.length; i++) {
            all.add(url(i));
        }
        return all;
    }

    /** @return every server's URL in order, comma-separated (the form of {@code --mgmt-url}) */
    String urlList() {
        return String.join(",", urls());
    }

    int size() {
        return ports.length;
    }

    int etcdMembers() {
        return etcd.size();
    }

    /** The plane's etcd members (tests that stop and restart them). */
    EtcdCluster etcd() {
        return etcd;
    }

    boolean alive(int i) {
        return servers[i] != null && servers[i].isAlive();
    }

    /** Starts server {@code i} (again) at its URL. */
    void start(int i) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        String cp = System.getProperty("rdmablock.test.classpath", "");
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-cp",
                cp.isBlank() ? System.getProperty("java.class.path") : cp, serverMain, "mgmt",
                "--listen", host + ":" + ports[i], "--data-dir", dir.resolve("mgmt" + (i + 1)).toString(),
                "--token", token));
        cmd.addAll(serverArgs);
        servers[i] = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("mgmt" + (i + 1) + ".log").toFile()))
                .start();
    }

    /** SIGKILL of server {@code i}, then waits (bounded) for it to be gone. */
    void kill(int i) throws InterruptedException {
        servers[i].destroyForcibly();
        if (!servers[i].waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("mgmt" + (i + 1) + " did not die on SIGKILL");
        }
    }

    /** Waits until server {@code i} answers {@code /health} 200. */
    void awaitHealthy(int i, int seconds) throws InterruptedException {
        try {
            Await.until(() -> {
                if (!alive(i)) {
                    throw new IllegalStateException("mgmt" + (i + 1) + " exited:" + tail(i, 20));
                }
                return get(i, "/health") != null;
            }, Duration.ofSeconds(seconds), "mgmt" + (i + 1) + " /health 200");
        } catch (AssertionError e) { // the same exception as before for callers (and the server's log)
            throw new IllegalStateException("mgmt" + (i + 1) + " " + url(i) + "/health not 200 within " + seconds
                    + " s:" + tail(i, 20), e);
        }
    }

    /**
     * The leader as the live servers see it: {@code GET /v1/leader} (docs/ha.md) on each live server, the first
     * that names a leader that is one of this plane's URLs.
     *
     * @return the leader's index, or -1 when no live server names one (an election under way, or servers without
     *         leader election: {@code /v1/leader} is then 404)
     */
    int leaderIndex() {
        for (int i = 0; i < ports.length; i++) {
            if (!alive(i)) {
                continue;
            }
            String body = get(i, "/v1/leader");
            int at = leaderOf(body, urls());
            if (at >= 0) {
                return at;
            }
        }
        return -1;
    }

    /**
     * @return true when every live server answered {@code GET /v1/leader} and none said it leads ({@code isLeader}
     *         true); false while one leads or a live server did not answer
     */
    boolean noneLeads() {
        for (int i = 0; i < ports.length; i++) {
            if (!alive(i)) {
                continue;
            }
            String body = get(i, "/v1/leader");
            if (body == null || body.replace(" ", "").contains("\"isLeader\":true")) {
                return false;
            }
        }
        return true;
    }

    /**
     * @param leaderJson a {@code GET /v1/leader} answer, {@code {"leader": URL or null, "self": URL, "isLeader": b}}
     * @param urls       the plane's URLs
     * @return the index in {@code urls} of the leader it names, or -1 (null, absent, not one of them, not JSON)
     */
    static int leaderOf(String leaderJson, List<String> urls) {
        if (leaderJson == null) {
            return -1;
        }
        try {
            var node = Json.MAPPER.readTree(leaderJson).get("leader");
            if (node == null || !node.isTextual()) {
                return -1;
            }
            String leader = node.asText().replaceAll("/+$", "");
            return urls.indexOf(leader);
        } catch (IOException | RuntimeException e) {
            // not a leader document
        }
        return -1;
    }

    /** @return the body of a 200 answer to {@code GET path} on server {@code i}, or null */
    private String get(int i, String path) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url(i) + path))
                    .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(3)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The last {@code lines} lines of server {@code i}'s log. */
    String tail(int i, int lines) {
        try {
            List<String> all = Files.readAllLines(dir.resolve("mgmt" + (i + 1) + ".log"));
            return "\n--- mgmt" + (i + 1) + ".log\n" + String.join("\n", all.subList(Math.max(0, all.size() - lines),
                    all.size()));
        } catch (IOException e) {
            return " (no log: " + e + ")";
        }
    }

    @Override
    public void close() {
        for (Process p : servers) {
            if (p != null) {
                p.destroyForcibly();
            }
        }
        for (Process p : servers) {
            try {
                if (p != null) {
                    p.waitFor(30, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (etcd != null) {
            etcd.close();
        }
    }
}
