package io.rdmablock.tools.nbd;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stock Debian NBD clients against the server: fio's nbd engine with verification, nbdcopy round trip (several
 * connections: CAN_MULTI_CONN), nbdinfo over TCP and a UNIX socket, qemu-img convert and compare. A test whose tool is
 * not installed is skipped, naming the package (fio, libnbd-bin, qemu-utils).
 */
@Timeout(120)
class NbdClientToolsTest {
    static final long SIZE = 32 << 20;

    @TempDir
    Path dir;
    FileBlockDevice device;
    NbdServer server;

    @BeforeEach
    void start() throws IOException {
        Path f = dir.resolve("vol.img");
        FileBlockDevice.createFile(f, SIZE);
        device = new FileBlockDevice(f, 512, true, 16);
        server = new NbdServer(new NbdExport("vol1", "test volume", device, false, NbdExport.DEFAULT_MAX_PAYLOAD_BYTES),
                "127.0.0.1:0", NbdServer.DEFAULT_DEPTH, NbdServer.DEFAULT_SLOT_BYTES);
    }

    @AfterEach
    void stop() {
        server.close();
        device.close();
    }

    static boolean onPath(String tool) {
        for (String p : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (Files.isExecutable(Path.of(p, tool))) {
                return true;
            }
        }
        return false;
    }

    static void requireTool(String tool, String debianPackage) {
        assumeTrue(onPath(tool), tool + " is not installed (apt-get install " + debianPackage + "): test skipped");
    }

    record Result(int exit, String out) {
    }

    Result run(String... cmd) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Path log = Files.createTempFile(dir, "out", ".log");
        pb.redirectOutput(log.toFile());
        Process p = pb.start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("timed out: " + String.join(" ", cmd) + "\n" + Files.readString(log));
        }
        return new Result(p.exitValue(), Files.readString(log));
    }

    Path randomImage(String name, long size, long seed) throws IOException {
        byte[] b = new byte[(int) size];
        new Random(seed).nextBytes(b);
        return Files.write(dir.resolve(name), b);
    }

    @Test
    void fioNbdEngineShouldVerifyWhatItWrote() throws Exception {
        requireTool("fio", "fio");
        Result r = run("fio", "--name=verify", "--ioengine=nbd", "--uri=" + server.uri(), "--rw=randwrite", "--bs=4k",
                "--iodepth=16", "--size=8M", "--verify=crc32c", "--do_verify=1", "--verify_fatal=1");
        assertTrue(r.out().contains("ioengine=nbd"), r.out());
        assertEquals(0, r.exit(), r.out());
        assertTrue(r.out().contains("err= 0"), r.out());
        assertFalse(r.out().contains("verify: bad"), r.out());
    }

    @Test
    void nbdcopyShouldRoundTripAnImageOverSeveralConnections() throws Exception {
        requireTool("nbdcopy", "libnbd-bin");
        Path src = randomImage("src.img", SIZE, 1);
        Path back = dir.resolve("back.img");
        Result up = run("nbdcopy", "--connections=4", src.toString(), server.uri());
        assertEquals(0, up.exit(), up.out());
        Result down = run("nbdcopy", "--connections=4", server.uri(), back.toString());
        assertEquals(0, down.exit(), down.out());
        assertEquals(-1, Files.mismatch(src, back));
        assertTrue(server.connectionCount() >= 2, "expected several connections, got " + server.connectionCount());
    }

    @Test
    void nbdinfoShouldReportSizeFlagsAndBlockSizes() throws Exception {
        requireTool("nbdinfo", "libnbd-bin");
        Result r = run("nbdinfo", "--json", server.uri());
        assertEquals(0, r.exit(), r.out());
        String j = r.out().replace(" ", "");
        assertTrue(j.contains("\"export-size\":" + SIZE), r.out());
        assertTrue(j.contains("\"block_size_minimum\":512"), r.out());
        assertTrue(j.contains("\"block_size_preferred\":4096"), r.out());
        assertTrue(j.contains("\"can_multi_conn\":true"), r.out());
        assertTrue(j.contains("\"can_fua\":true"), r.out());
        assertTrue(j.contains("\"can_zero\":true"), r.out());
    }

    @Test
    void nbdinfoShouldWorkOverAUnixSocket() throws Exception {
        requireTool("nbdinfo", "libnbd-bin");
        Path sock = dir.resolve("nbd.sock");
        try (NbdServer unix = new NbdServer(new NbdExport("vol1", "", device, true, 1 << 20), "unix:" + sock, 4, 4096)) {
            Result r = run("nbdinfo", unix.uri());
            assertEquals(0, r.exit(), r.out());
            assertTrue(r.out().contains("export-size: " + SIZE), r.out());
            assertTrue(r.out().contains("is_read_only: true"), r.out());
        }
    }

    @Test
    void qemuImgShouldConvertOntoTheExportAndCompareEqual() throws Exception {
        requireTool("qemu-img", "qemu-utils");
        Path src = randomImage("src.img", SIZE, 2);
        Result conv = run("qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", src.toString(), server.uri());
        assertEquals(0, conv.exit(), conv.out());
        Result cmp = run("qemu-img", "compare", "-f", "raw", "-F", "raw", src.toString(), server.uri());
        assertEquals(0, cmp.exit(), cmp.out());
        assertTrue(cmp.out().contains("Images are identical"), cmp.out());
        // and a difference is detected: overwrite one block through qemu-io-free path (nbdcopy not required)
        List<String> args = new ArrayList<>(List.of("qemu-img", "compare", "-f", "raw", "-F", "raw",
                randomImage("other.img", SIZE, 3).toString(), server.uri()));
        assertEquals(1, run(args.toArray(String[]::new)).exit());
    }
}
