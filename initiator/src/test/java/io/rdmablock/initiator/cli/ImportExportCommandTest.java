package io.rdmablock.initiator.cli;

import io.rdmablock.node.NodeConfig;
import io.rdmablock.node.StorageNode;
import io.rdmablock.node.nvmf.Subsystem;
import io.rdmablock.node.nvmf.TargetOptions;
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
            i.err = ps;
        } else if (cmd instanceof ExportCommand e) {
            e.err = ps;
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
        node.createVolume("img", 32L << 20, 4096, Set.of());
        byte[] image = new byte[(9 << 20) + 1000]; // not a multiple of the LBA size: padded on import
        new Random(7).nextBytes(image);
        Path in = dir.resolve("in.img");
        Files.write(in, image);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = run(new ImportCommand(), err, concat(connectArgs("img"), "--file", in.toString(), "--depth", "4"));
        assertEquals(0, rc, err.toString(StandardCharsets.UTF_8));
        String log = err.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("import: ") && log.contains("flushed"), log);
        assertTrue(log.contains("\r["), "progress bar drawn with carriage returns: " + log);

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
        node.createVolume("small", 4L << 20, 4096, Set.of());
        Path in = dir.resolve("big.img");
        Files.write(in, new byte[(4 << 20) + 4096]);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = run(new ImportCommand(), err, concat(connectArgs("small"), "--file", in.toString()));
        assertEquals(1, rc);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("the image is larger than the volume"),
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldExplainMissingConnectionOptions() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = run(new ExportCommand(), err, "--file", dir.resolve("x").toString(), "--address", "127.0.0.1:1");
        assertEquals(1, rc);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--address and --subnqn go together"));
    }
}
