package io.rdmablock.node.failover;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.DesiredCopy;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.PrimarySilence;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** A secondary in sync or syncing reports its primary once it heard no peer lease renewal from it for a lease. */
class PrimaryWatchTest {
    private static final long MS = 1_000_000L;
    private static final long LEASE = 2000;

    private static DesiredVolume volume(String primary, long epoch, CopyState mine) {
        List<DesiredCopy> copies = List.of(
                new DesiredCopy(primary, CopyRole.PRIMARY, CopyState.IN_SYNC, "127.0.0.1:1", Node.hostnqnOf(primary)),
                new DesiredCopy("b", CopyRole.SECONDARY, mine, "127.0.0.1:2", Node.hostnqnOf("b")));
        return new DesiredVolume("v1", "v1", 8L << 20, 4096, List.of("*"), "nqn.2026-11.io.rdmablock:volume:v1",
                VolumeState.READY, true, epoch, CopyRole.SECONDARY, 1, copies, null, null, false);
    }

    @Test
    void shouldReportThePrimaryAfterALeaseWithoutRenewalAndStopWhenOneComes() {
        PrimaryWatch w = new PrimaryWatch();
        long t0 = 1_000_000 * MS;
        w.update(List.of(volume("a", 3, CopyState.IN_SYNC)), "b", t0);
        long[] asked = {Long.MIN_VALUE};
        assertNull(w.silence("v1", n -> asked[0], LEASE, t0 + 1999 * MS), "within the lease of the watch's start");
        PrimarySilence s = w.silence("v1", n -> asked[0], LEASE, t0 + 2500 * MS);
        assertEquals(new PrimarySilence("a", 3, 2500), s);
        asked[0] = t0 + 2600 * MS; // a renewal from the primary's node
        assertNull(w.silence("v1", n -> n.equals(Node.hostnqnOf("a")) ? asked[0] : Long.MIN_VALUE, LEASE,
                t0 + 3000 * MS));
        assertEquals(2000, w.silence("v1", n -> asked[0], LEASE, t0 + 4600 * MS).silentMs());
        assertNull(w.silence("v1", n -> asked[0], 0, t0 + 9000 * MS), "no lease known: no report");
    }

    @Test
    void shouldRestartTheWatchOnANewPrimaryOrEpochAndIgnoreStaleCopiesAndPrimaries() {
        PrimaryWatch w = new PrimaryWatch();
        long t0 = 5_000_000 * MS;
        w.update(List.of(volume("a", 3, CopyState.SYNCING)), "b", t0);
        assertEquals(3, w.silence("v1", n -> Long.MIN_VALUE, LEASE, t0 + 3000 * MS).epoch(), "syncing counts");
        w.update(List.of(volume("a", 4, CopyState.IN_SYNC)), "b", t0 + 3000 * MS);
        assertNull(w.silence("v1", n -> Long.MIN_VALUE, LEASE, t0 + 4000 * MS), "epoch 4: watched from its start");
        w.update(List.of(volume("a", 4, CopyState.STALE)), "b", t0 + 4000 * MS);
        assertNull(w.silence("v1", n -> Long.MIN_VALUE, LEASE, t0 + 9000 * MS), "a stale copy gets no renewals");
        w.update(List.of(volume("b", 5, CopyState.IN_SYNC)), "b", t0 + 9000 * MS);
        assertNull(w.silence("v1", n -> Long.MIN_VALUE, LEASE, t0 + 19000 * MS), "this node is the primary");
    }
}
