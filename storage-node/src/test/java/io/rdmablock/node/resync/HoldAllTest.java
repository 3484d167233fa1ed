package io.rdmablock.node.resync;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RegionGate#holdAll}, a replicated snapshot's cut: it returns only once every write admitted before has
 * completed, holds every write (any range) until closed, lets FLUSH (no range) through, and gives up within its bound
 * with nothing held.
 */
class HoldAllTest {
    private static final long REGION = 64 << 10;

    private static RegionGate gate() {
        RegionGate g = new RegionGate(REGION);
        g.register(g::state); // a writer with nothing uncounted in flight
        return g;
    }

    @Test
    void waitsForTheWritesInFlightThenHoldsEveryWriteUntilClosed() throws Exception {
        RegionGate g = gate();
        try (RegionGate.Hold warm = g.holdAll(TimeUnit.SECONDS.toNanos(1), () -> false)) {
            assertFalse(g.tryEnter(0, 4096), "held while a hold is in place");
        }
        assertTrue(g.tryEnter(0, 4096), "admitted once closed");
        g.exit(0, 4096);
        // an open walk keeps writes counted, so one admitted now is in flight when the hold starts
        int walker = g.openWalker(TimeUnit.SECONDS.toNanos(1), () -> false);
        assertTrue(g.tryEnter(70 * REGION, 8192), "admitted: counted in its stripe");
        CompletableFuture<RegionGate.Hold> hold = CompletableFuture.supplyAsync(() -> {
            try {
                return g.holdAll(TimeUnit.SECONDS.toNanos(10), () -> false);
            } catch (TimeoutException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(200);
        assertFalse(hold.isDone(), "the hold waits for the write in flight");
        g.exit(70 * REGION, 8192);
        RegionGate.Hold h = hold.get(10, TimeUnit.SECONDS);
        assertFalse(g.tryEnter(0, 512), "a write at the start is held");
        assertFalse(g.tryEnter(1_000 * REGION + 7 * 512, 512), "a write anywhere is held");
        assertTrue(g.tryEnter(0, 0), "FLUSH goes on");
        h.close();
        assertTrue(g.tryEnter(0, 512), "admitted once the hold ended");
        g.exit(0, 512);
        g.closeWalker(walker);
    }

    @Test
    void givesUpWithinItsBoundWithNothingHeld() throws Exception {
        RegionGate g = gate();
        int walker = g.openWalker(TimeUnit.SECONDS.toNanos(1), () -> false);
        assertTrue(g.tryEnter(3 * REGION, 4096));
        long t0 = System.nanoTime();
        assertThrows(TimeoutException.class, () -> g.holdAll(TimeUnit.MILLISECONDS.toNanos(100), () -> false));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "bounded");
        assertTrue(g.tryEnter(9 * REGION, 4096), "nothing held after the timeout");
        g.exit(3 * REGION, 4096);
        g.exit(9 * REGION, 4096);
        g.closeWalker(walker);
    }
}
