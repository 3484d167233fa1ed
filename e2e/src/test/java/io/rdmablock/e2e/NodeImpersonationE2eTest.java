package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.nvmf.host.FabricAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The critical attack of issue "Node identities are proven", as it was tried on a real cluster: an R=2 volume whose
 * allow-list names one host, and a peer on the storage network that connects to the <em>secondary</em> copy claiming
 * a node's host NQN (a made-up one with the cluster's prefix, then the primary's exact one) to read the volume. Both
 * are refused; the volume's epoch is unchanged and the allowed host's replicated writes go on.
 */
class NodeImpersonationE2eTest {
    private static final long SIZE = 16L << 20;
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aPeerClaimingANodeNqnCannotReadTheSecondaryCopy() throws Exception {
        try (NodeCluster cluster = new NodeCluster(dir, 2, List.of())) {
            cluster.client().createVolume(new CreateVolumeRequest("r2", SIZE, 4096, 2, Limits.defaultMinInSync(2),
                    List.of(HOST)));
            Volume v = cluster.awaitVolume("r2", x -> x.state() == VolumeState.READY
                    && x.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC), 180, "2 in-sync copies");
            DeviceOptions opts = DeviceOptions.defaults().providerMode("soft").ioQueues(1).connectTimeoutMs(5_000)
                    .ctrlLossTimeoutMs(1_000);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "r2", HOST, opts)) {
                MemorySegment b = dev.allocateBuffer(4096);
                b.fill((byte) 0x5C);
                dev.writeSync(0, b, true);
                dev.freeBuffer(b);
            }
            VolumeCopy primary = v.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY).findFirst()
                    .orElseThrow();
            VolumeCopy secondary = v.copies().stream().filter(c -> c.role() == CopyRole.SECONDARY).findFirst()
                    .orElseThrow();
            String subnqn = "nqn.2026-11.io.rdmablock:volume:r2";
            for (String claimed : List.of("nqn.2026-11.io.rdmablock:node:intruder", Node.hostnqnOf(primary.nodeId()),
                    "nqn.2014-08.org.nvmexpress:uuid:99999999-2222-3333-4444-555555555555")) {
                Throwable t = assertThrows(Throwable.class, () -> {
                    try (BlockDevice d = NvmeBlockDevice.open(FabricAddress.parse(secondary.fabricAddress()), subnqn,
                            claimed, opts)) {
                        MemorySegment b = d.allocateBuffer(4096);
                        d.readSync(0, b);
                        throw new AssertionError("read the secondary as " + claimed + ": byte 0 = "
                                + b.get(ValueLayout.JAVA_BYTE, 0));
                    }
                }, "connecting to the secondary as " + claimed);
                assertTrue(!(t instanceof AssertionError), t.toString());
                System.out.println("refused as " + claimed + ": " + t);
            }
            Volume after = cluster.client().getVolume("r2");
            assertEquals(v.epoch(), after.epoch(), "the volume's epoch is unchanged");
            assertTrue(after.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC), after.toString());
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "r2", HOST, opts)) {
                MemorySegment b = dev.allocateBuffer(4096);
                dev.readSync(0, b);
                assertEquals((byte) 0x5C, b.get(ValueLayout.JAVA_BYTE, 4095), "the host's write is intact");
                b.fill((byte) 0x3D);
                dev.writeSync(4096, b, true); // replicated writes go on
                dev.freeBuffer(b);
            }
        }
    }
}
