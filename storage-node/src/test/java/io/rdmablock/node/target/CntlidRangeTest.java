package io.rdmablock.node.target;

import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Controller ids in a per-node range (docs/failover.md: a multipath host must never see one cntlid twice in a
 * subsystem): {@link TargetOptions#withCntlidRange} and {@link Target#cntlidRange}, validated.
 */
class CntlidRangeTest {
    @TempDir
    Path dir;

    /** An admin queue of host {@code name} (distinct hosts: a second association of one host fences the first). */
    private static RawHost admin(TargetFixture f, String name) {
        RawHost h = f.host(0, 32);
        assertEquals(0, h.fabricConnect(31, 0, f.subnqn, "nqn.2014-08.org.nvmexpress:uuid:host-" + name, 0xFFFF)
                .status(), "admin connect of host " + name);
        return h;
    }

    @Test
    void shouldRejectAnInvalidCntlidRangeNamingTheBounds() {
        TargetOptions d = TargetOptions.defaults();
        assertEquals(1, d.cntlidMin());
        assertEquals(0xFFEF, d.cntlidMax());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.withCntlidRange(0, 10));
        assertTrue(e.getMessage().contains("cntlidMin=0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> d.withCntlidRange(1, 0xFFF0));
        assertThrows(IllegalArgumentException.class, () -> d.withCntlidRange(20, 10));
        assertEquals(7, d.withCntlidRange(7, 7).cntlidMax());
    }

    @Test
    void shouldAllocateCntlidsFromTheOptionsRange() {
        try (TargetFixture f = new TargetFixture(dir, TargetOptions.defaults().withCntlidRange(5000, 5001), 8L << 20,
                512, Set.of("*"));
             RawHost a = admin(f, "a"); RawHost b = admin(f, "b")) {
            assertEquals(5000, TargetFixture.cntlid(a));
            assertEquals(5001, TargetFixture.cntlid(b));
        }
    }

    @Test
    void shouldAllocateCntlidsFromTheTargetRangeRoundRobinAndFixItOnceUsed() {
        try (TargetFixture f = new TargetFixture(dir)) {
            assertThrows(IllegalArgumentException.class, () -> f.target.cntlidRange(3, 2));
            f.target.cntlidRange(2048, 2049);
            try (RawHost a = admin(f, "a"); RawHost b = admin(f, "b")) {
                assertEquals(2048, TargetFixture.cntlid(a));
                assertEquals(2049, TargetFixture.cntlid(b));
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        () -> f.target.cntlidRange(1, 10));
                assertTrue(e.getMessage().contains("2048"), e.getMessage());
            }
            Await.until(() -> f.target.controllerCount() == 0, Duration.ofNanos(RawHost.TIMEOUT_NS),
                    "both associations ended");
            try (RawHost c = admin(f, "c")) {
                assertEquals(2048, TargetFixture.cntlid(c), "wrapped around to the range's start");
            }
        }
    }
}
