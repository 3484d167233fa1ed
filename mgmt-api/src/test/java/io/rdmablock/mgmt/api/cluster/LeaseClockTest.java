package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.store.InMemoryMetadataStore;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.PromoteRequest;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.testing.ManualClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Liveness and lease math on the monotonic clock (docs/resync.md, "Lease on a switchover"): a wall clock that jumps
 * changes nothing; {@code leaseWaitMs} counts from the last answer that told the old primary it was primary, and is
 * unknown (null) within a lease of a restart of the management server.
 */
class LeaseClockTest {
    private static final long MIB = 1L << 20;
    private static final long LEASE_MS = 2_000;
    private final AtomicLong wallMs = new AtomicLong(1_800_000_000_000L);
    private final ManualClock monoNanos = new ManualClock(-5_000_000_000L); // nanoTime may be negative
    private final InMemoryMetadataStore store = new InMemoryMetadataStore();

    private ClusterService service() {
        return new ClusterService(store, wallMs::get, monoNanos, 6_000, LEASE_MS, 600_000);
    }

    private void step(long ms) {
        monoNanos.advance(Duration.ofMillis(ms));
    }

    private static DesiredVolume beat(ClusterService c, String node, Volume v) {
        var reports = v == null ? List.<VolumeReport>of()
                : List.of(new VolumeReport(v.id(), v.sizeBytes(), VolumeState.READY, List.of()));
        var answer = c.heartbeat(node, new HeartbeatRequest(1L << 30, reports));
        return answer.volumes().isEmpty() ? null : answer.volumes().getFirst();
    }

    private Volume setUp(ClusterService c) {
        for (String n : List.of("n1", "n2")) {
            long capacity = n.equals("n2") ? 2L << 30 : 1L << 30;
            c.nodes().registerNode(new RegisterNodeRequest(n, "127.0.0.1:4420", "", capacity, capacity));
        }
        Volume v = c.createVolume(new CreateVolumeRequest("a", 2 * MIB, 4096, 2, 1, List.of()));
        beat(c, "n1", v);
        beat(c, "n2", v); // n2 primary (more room), told so now
        return c.getVolume("a");
    }

    @Test
    void shouldJudgeLivenessOnTheMonotonicClockNotTheWallClock() {
        ClusterService c = service();
        setUp(c);
        wallMs.addAndGet(-3_600_000); // the wall clock jumps back an hour
        assertEquals(NodeState.UP, c.nodes().listNodes().getFirst().state());
        wallMs.addAndGet(7_200_000); // and forward an hour
        assertEquals(NodeState.UP, c.nodes().listNodes().getFirst().state(), "a wall-clock jump is not silence");
        var refused = assertThrows(ApiException.class, () -> c.promote("a", new PromoteRequest("n1", false)));
        assertEquals(409, refused.problem().status(), "the primary's lease is held by the monotonic clock");
        step(6_001);
        assertEquals(NodeState.DOWN, c.nodes().listNodes().getFirst().state());
    }

    @Test
    void shouldWaitOutTheOldPrimarysLeaseFromTheLastAnswerThatToldIt() {
        ClusterService c = service();
        step(LEASE_MS + 1); // past the first lease after the start
        Volume v = setUp(c);
        assertEquals("n2", v.nodeId());
        step(LEASE_MS + 1);
        beat(c, "n1", v);
        Volume promoted = c.promote("a", new PromoteRequest("n1", false));
        assertEquals("n1", promoted.nodeId());
        beat(c, "n2", v); // alive again, now told it is a secondary: its lease does not grow
        step(10);
        assertEquals(0L, beat(c, "n1", v).leaseWaitMs(), "n2's last primary answer is older than a lease");
    }

    @Test
    void shouldAnswerAnUnknownLeaseWaitWithinALeaseOfARestart() {
        ClusterService first = service();
        step(LEASE_MS + 1);
        Volume v = setUp(first);
        ClusterService restarted = service(); // same store, runtime state lost
        step(LEASE_MS + 1);
        beat(restarted, "n1", v);
        monoNanos.advanceNanos(0);
        Volume promoted = restarted.promote("a", new PromoteRequest("n1", false));
        assertEquals(2, promoted.epoch());
        ClusterService again = service();
        beat(again, "n1", v);
        assertNull(beat(again, "n1", v).leaseWaitMs(), "a previous server may have told n2 it was primary");
        step(LEASE_MS + 1);
        assertEquals(0L, beat(again, "n1", v).leaseWaitMs(), "a lease after the start nobody can hold one from"
                + " the previous server");
    }
}
