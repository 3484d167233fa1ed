package io.rdmablock.node;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.VolumeQos;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** MgmtSync puts each desired volume's limits on its subsystem (docs/qos.md); the node exports the QoS metrics. */
class MgmtSyncQosTest {
    @TempDir
    Path dir;

    private static HeartbeatResponse answer(String id, VolumeQos qos) {
        DesiredVolume v = DesiredVolume.builder(id, id).subnqn("nqn.2026-11.io.rdmablock:volume:" + id)
                .role(CopyRole.PRIMARY).qos(qos).build();
        return HeartbeatResponse.of(false, List.of(v), 0);
    }

    @Test
    void shouldApplyChangeAndLiftTheLimitsOfEachVolume() throws Exception {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            sync.apply(answer("a", VolumeQos.ofIops(5000)));
            var qos = node.target().subsystemOfVolume("a").qos();
            assertEquals(VolumeQos.ofIops(5000), qos.limits(), "in force before hosts could connect");
            sync.apply(answer("a", VolumeQos.ofIops(20000)));
            assertEquals(VolumeQos.ofIops(20000), qos.limits(), "changed at the next answer");
            sync.apply(answer("a", VolumeQos.NONE));
            assertFalse(qos.active(), "lifted");
            var out = new ByteArrayOutputStream();
            PrometheusTextFormatWriter.create().write(out, node.metrics().registry().scrape());
            String text = out.toString(StandardCharsets.UTF_8);
            assertTrue(text.contains("rdmablock_volume_qos_held_commands{volume=\"a\"}"), text);
            assertTrue(text.contains("rdmablock_volume_qos_delayed_seconds_total{volume=\"a\"}"), text);
        }
    }

    @Test
    void shouldReadAnAnswerWithoutQosAsNoLimits() {
        HeartbeatResponse old = Json.read("""
                {"draining":false,"leaseMs":0,"volumes":[{"id":"a","name":"a","sizeBytes":8388608,"lbaSize":4096,
                "allowedHosts":[],"subnqn":"nqn.2026-11.io.rdmablock:volume:a","state":"ready","role":"primary",
                "epoch":1,"minInSync":1}]}""", HeartbeatResponse.class);
        assertEquals(VolumeQos.NONE, old.volumes().getFirst().qos());
    }
}
