package io.rdmablock.e2e;

import static io.rdmablock.tools.nbd.NbdProtocol.*;
import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.node.NodeConfig;
import io.rdmablock.node.StorageNode;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.tools.nbd.NbdExport;
import io.rdmablock.tools.nbd.NbdServer;
import io.rdmablock.tools.nbd.RawNbdClient;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end: NBD clients -> NbdServer -> NvmeBlockDevice -> soft verbs over TCP -> in-process storage node.
 */
@Timeout(180)
class NbdOverNodeTest {
    static final long SIZE = 32 << 20;

    @TempDir
    Path dir;
    StorageNode node;
    NvmeBlockDevice device;
    NbdServer server;

    @BeforeEach
    void start() throws Exception {
        node = new StorageNode(NodeConfig.local(dir.resolve("node")).withCreateVolumes(List.of("vol:32M:512:*"))).start();
        device = NvmeBlockDevice.open(node.fabricAddress(), Subsystem.nqnFor("vol"), null,
                DeviceOptions.defaults().providerMode("soft").ioQueues(1));
        server = new NbdServer(new NbdExport("vol", "", device, false, NbdExport.DEFAULT_MAX_PAYLOAD_BYTES),
                "127.0.0.1:0", 32, NbdServer.DEFAULT_SLOT_BYTES);
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        if (device != null) {
            device.close();
        }
        if (node != null) {
            node.close();
        }
    }

    @Test
    void shouldRoundTripAndAnswerZeroLengthAndOutOfRangeRequests() throws Exception {
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES)) {
            assertEquals(SIZE, c.go("vol"));
            byte[] b = new byte[65536];
            new Random(5).nextBytes(b);
            c.request(CMD_FLAG_FUA, CMD_WRITE, 1, 4096, b.length);
            c.write(ByteBuffer.wrap(b));
            assertEquals(new RawNbdClient.Reply(0, 1), c.reply());
            c.request(0, CMD_READ, 2, 4096, b.length);
            assertEquals(new RawNbdClient.Reply(0, 2), c.reply());
            assertEquals(ByteBuffer.wrap(b), c.read(b.length));
            for (int type : new int[] {CMD_READ, CMD_WRITE, CMD_WRITE_ZEROES, CMD_TRIM}) {
                c.request(0, type, 10 + type, SIZE, 0);
                assertEquals(new RawNbdClient.Reply(0, 10 + type), c.reply());
            }
            c.request(0, CMD_READ, 20, SIZE, 512);
            assertEquals(new RawNbdClient.Reply(EINVAL, 20), c.reply());
            c.request(0, CMD_WRITE_ZEROES, 21, 4096, 4096);
            assertEquals(new RawNbdClient.Reply(0, 21), c.reply());
            c.request(0, CMD_FLUSH, 22, 0, 0);
            assertEquals(new RawNbdClient.Reply(0, 22), c.reply());
            c.request(0, CMD_READ, 23, 4096, 4096);
            assertEquals(new RawNbdClient.Reply(0, 23), c.reply());
            assertEquals(ByteBuffer.allocate(4096), c.read(4096));
        }
    }

    @Test
    void shouldAdvertiseTheNewSizeOnTheNextHandshakeAfterResize() throws Exception {
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES)) {
            assertEquals(SIZE, c.go("vol"));
        }
        node.store().resize("vol", 2 * SIZE);
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES)) {
            assertEquals(2 * SIZE, c.go("vol"), "size advertised after volume resize");
            c.request(0, CMD_READ, 1, SIZE, 4096);
            assertEquals(new RawNbdClient.Reply(0, 1), c.reply());
            assertEquals(ByteBuffer.allocate(4096), c.read(4096));
        }
        assertEquals(2 * SIZE, device.capacityBytes());
        assertEquals(2 * SIZE, device.refreshCapacity().get(10, TimeUnit.SECONDS));
    }

    @Test
    void fioNbdEngineShouldVerifyThroughTheNode() throws Exception {
        assumeTrue(onPath("fio"), "fio is not installed (apt-get install fio): test skipped");
        Path log = dir.resolve("fio.log");
        Process p = new ProcessBuilder("fio", "--name=verify", "--ioengine=nbd", "--uri=" + server.uri(),
                "--rw=randwrite", "--bs=4k", "--iodepth=16", "--size=4M", "--verify=crc32c", "--do_verify=1",
                "--verify_fatal=1").redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "fio timed out");
        String out = Files.readString(log);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("err= 0"), out);
    }

    static boolean onPath(String tool) {
        for (String p : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (Files.isExecutable(Path.of(p, tool))) {
                return true;
            }
        }
        return false;
    }
}
