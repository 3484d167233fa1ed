package io.rdmablock.e2e;

import io.rdmablock.node.NodeConfig;
import io.rdmablock.node.StorageNode;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.node.target.TargetOptions;
import io.rdmablock.tools.copy.ExportCommand;
import io.rdmablock.tools.copy.ImportCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code rdmablock import} / {@code export} against an in-process storage node, connected with --address/--subnqn. */
@Tag("rdma-e2e")
@Timeout(120)
class ImportExportCommandTest {
    @TempDir
    Path dir;
    StorageNode node;

    @AfterEach
    void tearDown() {
        if (node != null) {
            node.close();
        }
    }

    String provider() {
        String p = System.getProperty("rdmablock.test.providers", "soft").split(",")[0].trim();
        return p.isEmpty() ? "soft" : p;
    }

    String[] connectArgs(String volume) {
        InetSocketAddress a = node.fabricAddress();
        return new String[]{"--address", a.getHostString() + ":" + a.getPort(), "--subnqn", Subsystem.nqnFor(volume),
                "--provider", provider()};
    }

    int run(Object cmd, ByteArrayOutputStream err, String... args) {
        PrintStream ps = new PrintStream(err, true, StandardCharsets.UTF_8);
        if (cmd instanceof ImportCommand i) {
            i.err(ps);
        } else if (cmd instanceof ExportCommand e) {
            e.err(ps);
        }
        return new CommandLine(cmd).execute(args);
    }

    static String[] concat(String[] a, String... b) {
        String[] r = new String[a.length + b.length];
        System.arraycopy(a, 0, r, 0, a.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    void startNode() {
        node = new StorageNode(new NodeConfig(dir.resolve("node"), new InetSocketAddress(
                System.getProperty("rdmablock.test.address", "127.0.0.1"), 0), provider(), null, null, "n1", null,
                null, 1000, List.of(), TargetOptions.defaults())).start();
    }

    @Test
    void shouldImportAndExportAnImageByteIdentical() throws Exception {
        startNode();
        node.createVolume("img", 32L << 20, 4096, Set.of("*"));
        byte[] image = new byte[(9 << 20) + 1000]; // not a multiple of the LBA size: padded on import
        new Random(7).nextBytes(image);
        Path in = dir.resolve("in.img");
        Files.write(in, image);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = run(new ImportCommand(), err, concat(connectArgs("img"), "--file", in.toString(), "--iodepth", "4"));
        assertEquals(0, rc, err.toString(StandardCharsets.UTF_8));
        String log = err.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("import: ") && log.contains("flushed"), log);
        assertTrue(log.contains("\r["), "progress bar drawn with carriage returns: " + log);
        assertTrue(log.contains("import: notice: file size " + image.length + " is not a multiple of the LBA size 4096; "
                + "volume bytes " + image.length + ".." + ((9 << 20) + 4095) + " are overwritten with zeroes"), log);

        Path out = dir.resolve("out.img");
        err.reset();
        rc = run(new ExportCommand(), err, concat(connectArgs("img"), "--file", out.toString(), "--length",
                String.valueOf(image.length)));
        assertEquals(0, rc, err.toString(StandardCharsets.UTF_8));
        assertArrayEquals(image, Files.readAllBytes(out));

        Path whole = dir.resolve("whole.img");
        rc = run(new ExportCommand(), err, concat(connectArgs("img"), "--file", whole.toString(), "--no-progress"));
        assertEquals(0, rc);
        assertEquals(32L << 20, Files.size(whole));
    }

    @Test
    void shouldRefuseAnImageLargerThanTheVolume() throws Exception {
        startNode();
        node.createVolume("small", 4L << 20, 4096, Set.of("*"));
        Path in = dir.resolve("big.img");
        Files.write(in, new byte[(4 << 20) + 4096]);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = run(new ImportCommand(), err, concat(connectArgs("small"), "--file", in.toString()));
        assertEquals(1, rc);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("the image is larger than the volume"),
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldNameTheReasonWhenTheExportFileCannotBeCreated() throws Exception {
        startNode();
        node.createVolume("ex", 4L << 20, 4096, Set.of("*"));
        Path bad = dir.resolve("nonexistent-dir").resolve("x");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = run(new ExportCommand(), err, concat(connectArgs("ex"), "--file", bad.toString(), "--no-progress"));
        assertEquals(1, rc);
        String log = err.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("export failed: " + bad + ": no such file or directory"), log);
    }

    @Test
    void shouldExplainMissingConnectionOptions() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = run(new ExportCommand(), err, "--file", dir.resolve("x").toString(), "--address", "127.0.0.1:1");
        assertEquals(1, rc);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--address and --subnqn go together"));
    }

    @Test
    void shouldFindTheVolumeThroughTheManagementServer() throws Exception {
        startNode();
        node.createVolume("byname", 8L << 20, 4096, Set.of("*"));
        InetSocketAddress fa = node.fabricAddress();
        io.rdmablock.mgmt.client.Volume v = new io.rdmablock.mgmt.client.Volume("id-1", "byname", 8L << 20, 4096, 1,
                List.of(), "n1", fa.getHostString() + ":" + fa.getPort(), Subsystem.nqnFor("byname"), 1,
                io.rdmablock.mgmt.client.VolumeState.READY, List.of(), "2026-11-29T22:00:00Z", 1, 1, List.of());
        com.sun.net.httpserver.HttpServer http = com.sun.net.httpserver.HttpServer.create(
                new InetSocketAddress("127.0.0.1", 0), 0);
        java.util.concurrent.atomic.AtomicReference<String> auth = new java.util.concurrent.atomic.AtomicReference<>();
        http.createContext("/v1/volumes/byname", ex -> {
            auth.set(ex.getRequestHeaders().getFirst("Authorization"));
            byte[] body = io.rdmablock.mgmt.client.Json.write(v).getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        http.start();
        try {
            byte[] image = new byte[3 << 20];
            new Random(3).nextBytes(image);
            Path in = dir.resolve("named.img");
            Files.write(in, image);
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            String url = "http://127.0.0.1:" + http.getAddress().getPort();
            int rc = run(new ImportCommand(), err, "--volume", "byname", "--mgmt-url", url, "--token", "t0k",
                    "--provider", provider(), "--file", in.toString(), "--no-progress");
            assertEquals(0, rc, err.toString(StandardCharsets.UTF_8));
            assertEquals("Bearer t0k", auth.get());
            Path out = dir.resolve("named-out.img");
            rc = run(new ExportCommand(), err, "--volume", "byname", "--mgmt-url", url, "--provider", provider(),
                    "--file", out.toString(), "--length", String.valueOf(image.length), "--no-progress");
            assertEquals(0, rc, err.toString(StandardCharsets.UTF_8));
            assertArrayEquals(image, Files.readAllBytes(out));
        } finally {
            http.stop(0);
        }
    }
}
