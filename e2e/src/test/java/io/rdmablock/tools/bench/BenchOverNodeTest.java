package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.node.NodeConfig;
import io.rdmablock.node.StorageNode;
import io.rdmablock.node.target.Subsystem;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** End to end: bench jobs (two clones, each its own device and queue pair) against an in-process node over soft. */
@Timeout(180)
class BenchOverNodeTest {
    @TempDir
    Path dir;

    @Test
    void shouldWriteAndVerifyThroughTheNode() throws Exception {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir).withCreateVolumes(List.of("vol:16M:512:*"))).start()) {
            Supplier<BlockDevice> devices = () -> NvmeBlockDevice.open(node.fabricAddress(), Subsystem.nqnFor("vol"),
                    null, DeviceOptions.defaults().providerMode("soft").ioQueues(1));
            JobSpec w = JobSpec.of("w", Map.of("rw", "randwrite", "bs", "4k", "iodepth", "8", "size", "2m",
                    "verify", "crc32c", "numjobs", "2", "offset", "0"));
            BenchRun.Outcome o = BenchRun.run(List.of(w), null, devices, null, BenchRun.Progress.none());
            assertEquals(2, o.jobs().size());
            for (Job j : o.jobs()) {
                assertEquals(0, j.errorCode(), j.messages.toString());
                assertTrue(j.verifiedBlocks.sum() > 0);
            }
            JobSpec r = JobSpec.of("r", Map.of("rw", "randread", "bs", "4k", "iodepth", "16", "runtime", "1",
                    "time_based", "1"));
            BenchRun.Outcome ro = BenchRun.run(List.of(r), null, devices, null, BenchRun.Progress.none());
            FioReport.Entry e = ro.entries().getFirst();
            assertEquals(0, e.error());
            assertTrue(e.read().ios > 100, "reads: " + e.read().ios);
        }
    }
}
