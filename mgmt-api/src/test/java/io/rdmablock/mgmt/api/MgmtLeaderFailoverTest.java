package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.api.store.EtcdCluster;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.testing.Await;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three management servers, each in its own JVM ({@link MgmtServerProcess}), on a real etcd: the HA REST contract
 * (307 from a follower, not executed there; GET /v1/leader; 503 no-leader) and a volume create through the followers
 * while the leader is killed with SIGKILL (no resign: the others wait out its lease). A plain java.net.http client
 * (redirects not followed by itself) follows one 307 by hand, as the contract says a client does.
 */
class MgmtLeaderFailoverTest {
    private static final String TOKEN = "ha-token";
    @TempDir
    static Path dir;
    static EtcdCluster etcd;
    private static final List<Process> processes = new ArrayList<>();
    private static final List<String> urls = new ArrayList<>();
    private static final List<java.util.Queue<String>> outputs = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2))
            .followRedirects(HttpClient.Redirect.NEVER).build();

    @BeforeAll
    static void start() throws Exception {
        EtcdCluster.assumeAvailable();
        etcd = EtcdCluster.start(dir, 1);
        String prefix = "/rdmablock-test/" + UUID.randomUUID() + "/";
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        var started = new ArrayList<CompletableFuture<String>>();
        for (int i = 0; i < 3; i++) {
            Process p = new ProcessBuilder(javaBin, "-Xmx192m", "-cp", System.getProperty("java.class.path"),
                    MgmtServerProcess.class.getName(), etcd.endpointList(), prefix, dir.resolve("m" + i).toString(),
                    TOKEN).redirectErrorStream(true).start();
            processes.add(p);
            var out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            var url = new CompletableFuture<String>();
            var lines = new java.util.concurrent.ConcurrentLinkedQueue<String>();
            outputs.add(lines);
            Thread.ofPlatform().daemon().start(() -> { // reads to the end so the process never blocks on its pipe
                try {
                    for (String line; (line = out.readLine()) != null; ) {
                        if (lines.size() < 200) {
                            lines.add(line);
                        }
                        if (line.startsWith("url ")) {
                            url.complete(line.substring(4).trim());
                        }
                    }
                } catch (java.io.IOException e) {
                    // the process went away
                }
                url.complete(null);
            });
            started.add(url);
        }
        for (int i = 0; i < started.size(); i++) {
            String u;
            try {
                u = started.get(i).get(180, TimeUnit.SECONDS); // three JVMs loading gRPC at once on a loaded machine
            } catch (java.util.concurrent.TimeoutException e) {
                u = null;
            }
            int n = i;
            assertTrue(u != null && u.startsWith("http://"), () -> "management server " + n + " did not start; "
                    + "output: " + String.join("\n", outputs.get(n)));
            urls.add(u);
        }
    }

    @AfterAll
    static void stop() throws InterruptedException {
        for (Process p : processes) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    private HttpResponse<String> send(String method, String url, String body) throws Exception {
        var b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + TOKEN);
        if (body == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** @return the base URL of a server among {@code among} that says it leads now; null when none does */
    private String leaderAmong(List<String> among) {
        for (String u : among) {
            try {
                var r = send("GET", u + "/v1/leader", null);
                if (r.statusCode() == 200 && new JsonObject(r.body()).getBoolean("isLeader")) {
                    return u;
                }
            } catch (Exception e) {
                // down or slow: the next one
            }
        }
        return null;
    }

    /** @return the base URL of the server that says it leads, waiting up to {@code bound}; fails when none does */
    private String awaitLeader(List<String> among, Duration bound) {
        return Await.value(() -> leaderAmong(among), Objects::nonNull, bound, "a leader among " + among);
    }

    private static String create(String name) {
        return "{\"name\":\"" + name + "\",\"sizeBytes\":1048576}";
    }

    @Test
    void shouldRedirectFollowerWritesWithoutExecutingThemAndSurviveALeaderKill() throws Exception {
        String leader = awaitLeader(urls, Duration.ofSeconds(30));
        List<String> followers = urls.stream().filter(u -> !u.equals(leader)).toList();
        var reg = send("POST", leader + "/v1/nodes", """
                {"nodeId":"n1","fabricAddress":"127.0.0.1:4420","metricsUrl":"","capacityBytes":1073741824,\
                "freeBytes":1073741824}""");
        assertEquals(201, reg.statusCode(), reg.body());

        // GET /v1/leader on a follower names the leader
        var who = new JsonObject(send("GET", followers.get(0) + "/v1/leader", null).body());
        assertEquals(leader, who.getString("leader"));
        assertEquals(followers.get(0), who.getString("self"));
        assertFalse(who.getBoolean("isLeader"));
        assertEquals("etcd", who.getJsonObject("metadataStore").getString("kind"), who.encode());
        assertTrue(who.getJsonObject("metadataStore").getBoolean("reachable"), who.encode());
        assertNull(who.getJsonObject("metadataStore").getValue("detail"), who.encode());

        // a follower's write: 307 to the leader, same path and query, not executed
        var r = send("POST", followers.get(0) + "/v1/volumes?x=1", create("redirected"));
        assertEquals(307, r.statusCode(), r.body());
        assertEquals(leader + "/v1/volumes?x=1", r.headers().firstValue("Location").orElse(""));
        assertEquals(Problem.MEDIA_TYPE, r.headers().firstValue("Content-Type").orElse(""));
        assertEquals(ProblemTypes.NOT_LEADER, Json.read(r.body(), Problem.class).type(), r.body());
        assertEquals(leader, new JsonObject(r.body()).getString("leader"));
        for (String u : urls) {
            assertEquals(404, send("GET", u + "/v1/volumes/redirected", null).statusCode(), "executed on a follower");
        }
        // a node's background budget (docs/qos.md): set on the leader; a follower's PATCH is redirected, not executed
        String bg8 = "{\"background\":{\"maxMiBps\":8,\"minMiBps\":8}}";
        assertEquals(200, send("PATCH", leader + "/v1/nodes/n1", bg8).statusCode());
        var bgFollower = send("PATCH", followers.get(0) + "/v1/nodes/n1",
                "{\"background\":{\"maxMiBps\":1,\"minMiBps\":1}}");
        assertEquals(307, bgFollower.statusCode(), bgFollower.body());
        assertEquals(leader + "/v1/nodes/n1", bgFollower.headers().firstValue("Location").orElse(""));
        assertEquals(8, new JsonObject(send("GET", leader + "/v1/nodes/n1", null).body()).getJsonObject("background")
                .getInteger("maxMiBps"), "not executed on the follower");
        // a GET of a stored record on a follower is its own answer; one of runtime state (node liveness, known
        // only to the leader) is redirected like a write
        assertEquals(404, send("GET", followers.get(1) + "/v1/volumes/none-such", null).statusCode());
        var nodes = send("GET", followers.get(1) + "/v1/nodes", null);
        assertEquals(307, nodes.statusCode(), nodes.body());
        assertEquals(leader + "/v1/nodes", nodes.headers().firstValue("Location").orElse(""));
        assertEquals(200, send("GET", leader + "/v1/nodes", null).statusCode());

        // kill -9 the leader; create through the followers' URLs, following one 307 by hand
        Process leaderProcess = processes.get(urls.indexOf(leader));
        long killed = System.nanoTime();
        leaderProcess.destroyForcibly();
        var elected = CompletableFuture.supplyAsync(() -> {
            awaitLeader(followers, Duration.ofSeconds(30));
            return (System.nanoTime() - killed) / 1_000_000;
        });
        var attempts = new AtomicInteger();
        // each round tries the followers in turn; the last answer (or error) is the value, so a timeout shows it
        String last = Await.value(() -> {
            String answer = "";
            for (String u : followers) {
                attempts.incrementAndGet();
                try {
                    var a = send("POST", u + "/v1/volumes", create("during-kill"));
                    if (a.statusCode() == 307) {
                        a = send("POST", a.headers().firstValue("Location").orElseThrow(), create("during-kill"));
                    }
                    answer = a.statusCode() + " " + a.body();
                    if (a.statusCode() == 201) {
                        break;
                    }
                } catch (Exception e) {
                    answer = e.toString(); // the dead leader: connection refused
                }
            }
            return answer;
        }, answer -> answer.startsWith("201 "), Duration.ofSeconds(30), "a create during the leader kill");
        long createdMs = (System.nanoTime() - killed) / 1_000_000;
        long electedMs = elected.get(40, TimeUnit.SECONDS);
        System.out.println("MgmtLeaderFailoverTest: after kill -9 of the leader a new leader in " + electedMs
                + " ms; the create through the followers' URLs answered 201 after " + createdMs + " ms (" + attempts
                + " attempts; lease TTL 3 s)");
        assertTrue(last.startsWith("201 "), "create during the leader kill: " + last);
        assertTrue(electedMs > 0 && electedMs < 15_000, electedMs + " ms");
        assertTrue(createdMs < 15_000, createdMs + " ms");
        String newLeader = awaitLeader(followers, Duration.ofSeconds(5));
        assertEquals(200, send("GET", newLeader + "/v1/volumes/during-kill", null).statusCode());
        var n1 = send("GET", newLeader + "/v1/nodes/n1", null);
        assertEquals(200, n1.statusCode(), n1.body());
        assertEquals(8, new JsonObject(n1.body()).getJsonObject("background").getInteger("maxMiBps"),
                "the background budget set under the old leader, from etcd: " + n1.body());

        // no leader (etcd gone): a follower's write is 503 no-leader with Retry-After 1, bounded
        String follower = followers.stream().filter(u -> !u.equals(newLeader)).findFirst().orElseThrow();
        etcd.stop(0);
        long stopped = System.nanoTime();
        HttpResponse<String> noLeader = Await.value(() -> {
            try {
                return send("POST", follower + "/v1/volumes", create("no-leader"));
            } catch (Exception e) {
                throw new IllegalStateException("POST to the follower " + follower, e);
            }
        }, a -> a.statusCode() == 503 && a.body().contains(ProblemTypes.NO_LEADER), Duration.ofSeconds(30),
                "503 no-leader from a follower with etcd stopped");
        assertEquals(503, noLeader.statusCode(), noLeader.body());
        assertEquals(ProblemTypes.NO_LEADER, Json.read(noLeader.body(), Problem.class).type(), noLeader.body());
        assertEquals("1", noLeader.headers().firstValue("Retry-After").orElse(""));
        var bgNoLeader = send("PATCH", follower + "/v1/nodes/n1", bg8);
        assertEquals(503, bgNoLeader.statusCode(), bgNoLeader.body());
        assertEquals(ProblemTypes.NO_LEADER, Json.read(bgNoLeader.body(), Problem.class).type(), bgNoLeader.body());
        System.out.println("MgmtLeaderFailoverTest: with etcd stopped a follower's write was 503 no-leader after "
                + (System.nanoTime() - stopped) / 1_000_000 + " ms");

        // GET /v1/leader with etcd stopped: answered, no leader, the metadata store unreachable and why
        var down = new JsonObject(send("GET", follower + "/v1/leader", null).body());
        assertNull(down.getValue("leader"), down.encode());
        assertEquals("etcd", down.getJsonObject("metadataStore").getString("kind"), down.encode());
        assertFalse(down.getJsonObject("metadataStore").getBoolean("reachable"), down.encode());
        assertFalse(down.getJsonObject("metadataStore").getString("detail").isBlank(), down.encode());
    }
}
