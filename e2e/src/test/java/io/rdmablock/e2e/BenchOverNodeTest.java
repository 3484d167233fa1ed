package io.rdmablock.e2e;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rdmablock.node.NodeConfig;
import io.rdmablock.node.StorageNode;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.tools.bench.BenchCommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * End to end: bench jobs (two clones, each its own device and queue pair) against an in-process node over soft,
 * through the {@code rdmablock bench} command and its fio JSON output.
 */
@Timeout(180)
class BenchOverNodeTest {
    @TempDir
    Path dir;

    @Test
    void shouldWriteAndVerifyThroughTheNode() throws Exception {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir).withCreateVolumes(List.of("vol:16M:512:*"))).start()) {
            InetSocketAddress a = node.fabricAddress();
            String[] device = {"--address", a.getHostString() + ":" + a.getPort(), "--subnqn", Subsystem.nqnFor("vol"),
                    "--provider", "soft", "--eta", "never", "--output-format", "json"};
            JsonNode w = bench(device, "--name", "w", "--rw", "randwrite", "--bs", "4k", "--iodepth", "8",
                    "--size", "2m", "--verify", "crc32c", "--numjobs", "2", "--offset", "0");
            JsonNode jobs = w.get("jobs");
            assertEquals(2, jobs.size(), w.toString());
            for (JsonNode j : jobs) {
                assertEquals(0, j.get("error").asInt(), j.path("messages").toString());
                assertTrue(j.get("verified_blocks").asLong() > 0, j.toString());
            }
            JsonNode r = bench(device, "--name", "r", "--rw", "randread", "--bs", "4k", "--iodepth", "16",
                    "--runtime", "1", "--time_based", "1");
            JsonNode e = r.get("jobs").get(0);
            assertEquals(0, e.get("error").asInt(), e.path("messages").toString());
            long ios = e.get("read").get("total_ios").asLong();
            assertTrue(ios > 100, "reads: " + ios);
        }
    }

    /** Runs {@code rdmablock bench} with {@code args}, the fio JSON written to a file; returns that JSON. */
    private JsonNode bench(String[] device, String... args) throws Exception {
        Path out = dir.resolve("bench-" + System.nanoTime() + ".json");
        String[] all = new String[device.length + args.length + 2];
        System.arraycopy(device, 0, all, 0, device.length);
        System.arraycopy(args, 0, all, device.length, args.length);
        all[all.length - 2] = "--output";
        all[all.length - 1] = out.toString();
        StringWriter err = new StringWriter();
        CommandLine cl = BenchCommand.commandLine();
        cl.setErr(new PrintWriter(err, true));
        assertEquals(0, cl.execute(all), err.toString());
        return new ObjectMapper().readTree(out.toFile());
    }
}
