package io.rdmablock.initiator;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class MultipathOptionsTest {
    @Test
    void shouldDefaultAndValidateTheFailoverTimings() {
        assertEquals(1000, DeviceOptions.defaults().pathTimeoutMs());
        assertEquals(30_000, DeviceOptions.defaults().failoverTimeoutMs());
        assertEquals(0, DeviceOptions.defaults().pathTimeoutMs(0).pathTimeoutMs());
        var e = assertThrows(IllegalArgumentException.class, () -> DeviceOptions.defaults().pathTimeoutMs(-1));
        assertEquals("invalid pathTimeoutMs: pathTimeoutMs=-1, min=0, max=3600000", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> DeviceOptions.defaults().failoverTimeoutMs(0));
        assertEquals("invalid failoverTimeoutMs: failoverTimeoutMs=0, min=1, max=86400000", e.getMessage());
    }

    @Test
    void shouldListCopiesWithAnAddressPrimaryFirst() {
        Volume v = new Volume("id", "v", 1 << 20, 512, 3, List.of(), "n2", "h2:1", Volume.subnqnOf("v"), 1,
                VolumeState.READY, List.of(), "2026-11-29T22:00:00Z", 4, 1, List.of(
                new VolumeCopy("n1", CopyRole.SECONDARY, CopyState.IN_SYNC, "h1:1"),
                new VolumeCopy("n2", CopyRole.PRIMARY, CopyState.IN_SYNC, "h2:1"),
                new VolumeCopy("n3", CopyRole.SECONDARY, CopyState.STALE, "")));
        CopySource.Copies c = MgmtCopySource.copiesOf(v);
        assertEquals(4, c.epoch());
        assertEquals(List.of(new CopySource.Copy("n2", true, "h2:1"), new CopySource.Copy("n1", false, "h1:1")),
                c.copies());
        assertEquals("n2", c.primaryNodeId());
        Volume single = new Volume("id", "s", 1 << 20, 512, 1, List.of(), "n1", "h1:1", Volume.subnqnOf("s"), 1,
                VolumeState.READY, List.of(), "2026-11-29T22:00:00Z");
        assertEquals(1, MgmtCopySource.copiesOf(single).copies().size());
    }
}
