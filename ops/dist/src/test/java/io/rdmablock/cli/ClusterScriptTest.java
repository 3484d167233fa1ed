package io.rdmablock.cli;

import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.NodeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs ops/cluster up/status/down for real, with a launcher that starts this JVM's classpath (the
 * management server through RdmablockCli, nodes through {@link RdmablockCliFakeNode}).
 */
class ClusterScriptTest {
    private static final Path REPO = Path.of(System.getProperty("user.dir")).resolve("../..").normalize();

    private record Result(int exitCode, String out) {
    }

    private static Result run(Path launcher, String... args) throws Exception {
        var command = new java.util.ArrayList<String>();
        command.add(REPO.resolve("ops/cluster").toString());
        command.addAll(List.of(args));
        var pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("RDMABLOCK_BIN", launcher.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(180, TimeUnit.SECONDS), "ops/cluster timed out: " + out);
        return new Result(p.exitValue(), out);
    }

    private static Path launcher(Path dir) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        String cp = System.getProperty("java.class.path");
        Path script = dir.resolve("launcher");
        Files.writeString(script, """
                #!/bin/sh
                if [ "$1" = node ]; then
                  shift
                  exec '%1$s' -Xmx128m -cp '%2$s' io.rdmablock.cli.RdmablockCliFakeNode "$@"
                fi
                exec '%1$s' -Xmx256m --enable-native-access=ALL-UNNAMED -cp '%2$s' io.rdmablock.cli.RdmablockCli "$@"
                """.formatted(java, cp));
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }

    @Test
    void shouldStartClusterPrintUrlAndTokenThenStopIt(@TempDir Path tmp) throws Exception {
        Path launcher = launcher(tmp);
        Path dir = tmp.resolve("cluster");
        Process bystander = new ProcessBuilder("sleep", "120").start();
        try {
            var up = run(launcher, "up", "--dir", dir.toString(), "--nodes", "2", "--wait-s", "150");
            assertEquals(0, up.exitCode(), up.out());
            String url = up.out().lines().filter(l -> l.startsWith("management URL: ")).findFirst().orElseThrow()
                    .substring("management URL: ".length());
            String token = up.out().lines().filter(l -> l.startsWith("token: ")).findFirst().orElseThrow()
                    .substring("token: ".length());
            assertEquals(token, Files.readString(dir.resolve("token")).trim());
            assertTrue(Files.readString(dir.resolve("env")).contains("RDMABLOCK_MGMT_URL=" + url));
            String readToken = up.out().lines().filter(l -> l.startsWith("read token: ")).findFirst().orElseThrow()
                    .substring("read token: ".length());
            assertEquals(readToken, Files.readString(dir.resolve("read-token")).trim());
            assertTrue(Files.readString(dir.resolve("env")).contains("RDMABLOCK_READ_TOKEN=" + readToken));
            assertEquals("rw-------", PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(dir.resolve("read-token"))));
            assertEquals(2, new MgmtClient(URI.create(url), readToken).listNodes().size(), "reads with the read token");
            var noToken = assertThrows(io.rdmablock.mgmt.client.MgmtException.class,
                    () -> new MgmtClient(URI.create(url), null).listNodes());
            assertEquals(401, noToken.problem().status());

            var client = new MgmtClient(URI.create(url), token);
            var nodes = client.listNodes();
            assertEquals(List.of("node1", "node2"), nodes.stream().map(n -> n.nodeId()).toList());
            assertTrue(nodes.stream().allMatch(n -> n.state() == NodeState.UP), nodes.toString());
            assertTrue(nodes.stream().allMatch(n -> n.metricsUrl().matches("http://.+:[1-9][0-9]*/metrics")),
                    nodes.toString());
            assertFalse(Files.readString(dir.resolve("mgmt.log")).contains(token), "token in mgmt.log");
            for (String log : List.of("mgmt.log", "node1.log", "env")) {
                assertEquals("rw-------", PosixFilePermissions.toString(
                        Files.getPosixFilePermissions(dir.resolve(log))), log);
            }

            var again = run(launcher, "up", "--dir", dir.toString(), "--nodes", "0");
            assertEquals(1, again.exitCode(), again.out());
            assertTrue(again.out().contains("already running"), again.out());
            assertEquals(0, run(launcher, "status", "--dir", dir.toString()).exitCode());

            // a stale pid file naming a process that is not ours must not be signalled
            Files.writeString(dir.resolve("node9.pid"), Long.toString(bystander.pid()));
            long mgmtPid = Long.parseLong(Files.readString(dir.resolve("mgmt.pid")).trim());

            var down = run(launcher, "down", "--dir", dir.toString());
            assertEquals(0, down.exitCode(), down.out());
            assertTrue(bystander.isAlive(), "ops/cluster down signalled a process that is not its own");
            var mgmt = ProcessHandle.of(mgmtPid);
            if (mgmt.isPresent()) { // exited; wait for init to reap it
                mgmt.get().onExit().get(10, TimeUnit.SECONDS);
            }
            assertFalse(client.health());
            assertFalse(Files.exists(dir.resolve("mgmt.pid")));
            assertEquals(1, run(launcher, "status", "--dir", dir.toString()).exitCode());
        } finally {
            bystander.destroyForcibly();
            run(launcher, "down", "--dir", dir.toString());
        }
    }

    @Test
    void shouldStartEtcdClusterAndSeveralManagementServersSharingItThenStopAll(@TempDir Path tmp) throws Exception {
        Path etcd = Path.of(System.getenv().getOrDefault("RDMABLOCK_ETCD_BIN", "/usr/bin/etcd"));
        if (!Files.isExecutable(etcd)) {
            String why = etcd + " is not installed (Debian: apt-get install etcd-server)";
            org.junit.jupiter.api.Assertions.assertNotEquals("1", System.getenv("RDMABLOCK_REQUIRE_ETCD"),
                    "RDMABLOCK_REQUIRE_ETCD=1 but " + why);
            org.junit.jupiter.api.Assumptions.abort("etcd test skipped: " + why);
        }
        Path launcher = launcher(tmp);
        Path dir = tmp.resolve("cluster");
        try {
            var up = run(launcher, "up", "--dir", dir.toString(), "--nodes", "1", "--etcd", "3", "--mgmt", "2",
                    "--wait-s", "150");
            assertEquals(0, up.exitCode(), up.out());
            String urls = up.out().lines().filter(l -> l.startsWith("management URLs: ")).findFirst().orElseThrow()
                    .substring("management URLs: ".length()).split(" ")[0];
            List<String> each = List.of(urls.split(","));
            assertEquals(2, each.size(), urls);
            var sourced = new ProcessBuilder("bash", "-c",
                    ". \"$1\" && echo \"$RDMABLOCK_MGMT_URL\" && echo \"$RDMABLOCK_ETCD_ENDPOINTS\"", "env",
                    dir.resolve("env").toString()).redirectErrorStream(true).start();
            List<String> lines = new String(sourced.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines()
                    .toList();
            assertTrue(sourced.waitFor(10, TimeUnit.SECONDS));
            assertEquals(urls, lines.get(0), "RDMABLOCK_MGMT_URL in env: " + lines);
            assertTrue(lines.get(1).matches("http://127\\.0\\.0\\.1:[0-9]+(,http://127\\.0\\.0\\.1:[0-9]+){2}"),
                    "RDMABLOCK_ETCD_ENDPOINTS in env: " + lines);
            String token = Files.readString(dir.resolve("token")).trim();
            // node1 registered through the first server. Node liveness is the leader's runtime state, so the second
            // (a follower) redirects node reads to the leader it learns from the shared etcd: a client that starts
            // with the second URL follows it
            var second = new MgmtClient(MgmtClient.parseUrls("urls", each.get(1) + "," + each.get(0)), token,
                    java.time.Duration.ofSeconds(10), null);
            assertEquals(List.of("node1"), second.listNodes().stream().map(n -> n.nodeId()).toList());
            assertTrue(Files.readString(dir.resolve("mgmt2.log")).contains("metadata: etcd"));
            long nodePid = Long.parseLong(Files.readString(dir.resolve("node1.pid")).trim());
            List<String> nodeArgs = List.of(new String(Files.readAllBytes(Path.of("/proc/" + nodePid + "/cmdline")),
                    StandardCharsets.UTF_8).split("\0"));
            int at = nodeArgs.indexOf("--mgmt-url");
            assertTrue(at >= 0 && urls.equals(nodeArgs.get(at + 1)), "node1 gets every management URL: " + nodeArgs);
            var pids = new java.util.ArrayList<Long>();
            for (String name : List.of("etcd1", "etcd2", "etcd3", "mgmt", "mgmt2", "node1")) {
                long pid = Long.parseLong(Files.readString(dir.resolve(name + ".pid")).trim());
                assertTrue(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), name + " not running");
                pids.add(pid);
            }
            assertEquals(0, run(launcher, "status", "--dir", dir.toString()).exitCode());

            var down = run(launcher, "down", "--dir", dir.toString());
            assertEquals(0, down.exitCode(), down.out());
            for (long pid : pids) {
                var p = ProcessHandle.of(pid);
                if (p.isPresent()) {
                    p.get().onExit().get(10, TimeUnit.SECONDS);
                }
            }
            assertFalse(Files.exists(dir.resolve("etcd1.pid")));
        } finally {
            run(launcher, "down", "--dir", dir.toString());
        }
    }

    @Test
    void shouldRejectBadArguments(@TempDir Path tmp) throws Exception {
        Path launcher = launcher(tmp);
        var noDir = run(launcher, "up");
        assertEquals(2, noDir.exitCode(), noDir.out());
        var nodes = run(launcher, "up", "--dir", tmp.resolve("c").toString(), "--nodes", "x");
        assertEquals(1, nodes.exitCode(), nodes.out());
        assertTrue(nodes.out().contains("invalid --nodes: --nodes=x, min=0, max=16"), nodes.out());
        var mgmts = run(launcher, "up", "--dir", tmp.resolve("c").toString(), "--mgmt", "2");
        assertEquals(1, mgmts.exitCode(), mgmts.out());
        assertTrue(mgmts.out().contains("--mgmt=2 needs --etcd"), mgmts.out());
    }
}
