package io.rdmablock.node;

import io.rdmablock.mgmt.client.BackgroundInEffect;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.NodeBackground;
import io.rdmablock.node.metrics.ForegroundLatency;
import io.rdmablock.node.qos.BackgroundBudget;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The node's background budget set from the management plane (docs/qos.md, "Background budget"): a heartbeat
 * answer's {@code background} is on the budget when {@link BackgroundSync#apply} returns, a greedy background taker
 * (a resync's region walk) on the real clock slows to the new ceiling within 1 s, 0/0 restores the start-up values,
 * and the report is sent only once a server that knows it answered.
 */
class BackgroundSyncTest {
    private static final long MIB = 1L << 20;

    @Test
    void aHeartbeatAnswerSetsTheBoundsAndARunningTakerSlowsWithinASecond() throws Exception {
        try (BackgroundBudget budget = BackgroundBudget.ofMib(4, 40, new ForegroundLatency())) {
            BackgroundSync sync = new BackgroundSync(budget);
            assertNull(sync.report(), "no answer yet: nothing reported (an older server refuses the field)");
            sync.apply(null);
            assertNull(sync.report(), "an older server's answer: still nothing");
            assertEquals(40 * MIB, budget.ceilingBytesPerSecond(), "kept");

            AtomicLong taken = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            Thread walker = Thread.ofPlatform().daemon().start(() -> { // a resync's walk: 64 KiB regions
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (!stop.get() && System.nanoTime() < deadline) { // bounded: stop, or 20 s
                    if (budget.acquire(64 << 10, stop::get)) {
                        taken.addAndGet(64 << 10);
                    }
                }
            });
            try {
                Thread.sleep(300);
                long before = taken.get();
                Thread.sleep(500);
                long fastRate = (taken.get() - before) * 2;
                assertTrue(fastRate > 10 * MIB, "at the 40 MiB/s ceiling first: " + fastRate + " B/s");

                HeartbeatResponse answer = Json.read(Json.write(HeartbeatResponse.of(false, List.of(), 0)
                        .withBackground(new NodeBackground(1, 1))), HeartbeatResponse.class); // as on the wire
                long appliedNs = System.nanoTime();
                sync.apply(answer.background());
                assertEquals(MIB, budget.ceilingBytesPerSecond(), "in force when apply returns");
                assertEquals(MIB, budget.rateBytesPerSecond());
                Thread.sleep(1_000 - (System.nanoTime() - appliedNs) / 1_000_000 > 0
                        ? 1_000 - (System.nanoTime() - appliedNs) / 1_000_000 : 0);
                long at1s = taken.get();
                Thread.sleep(1_000);
                long slowRate = taken.get() - at1s;
                assertTrue(slowRate <= 2 * MIB, "from 1 s after the answer on, ~1 MiB/s: " + slowRate + " B/s"
                        + " (was " + fastRate + ")");
                assertTrue(slowRate > 0, "still progressing at the floor: " + slowRate);
                BackgroundInEffect r = sync.report();
                assertEquals(new BackgroundInEffect(MIB, MIB, MIB), r, "reported in the next heartbeat");
                assertNull(sync.report(), "no answer to that heartbeat (an older leader's 400?): the next goes "
                        + "without the report");
                assertEquals(r, sync.report(), "and the one after with it again");
                sync.apply(null); // an older server's answer
                assertNull(sync.report(), "an older server: no more reports");
                sync.apply(answer.background());
                assertEquals(r, sync.report(), "a server that knows it again");

                sync.apply(NodeBackground.STARTUP);
                assertEquals(40 * MIB, budget.ceilingBytesPerSecond(), "0/0: the start-up ceiling");
                assertEquals(4 * MIB, budget.floorBytesPerSecond(), "0/0: the start-up floor");
            } finally {
                stop.set(true);
                walker.join(5_000);
            }
        }
    }
}
