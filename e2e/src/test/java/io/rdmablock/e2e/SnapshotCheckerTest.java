package io.rdmablock.e2e;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The campaign's snapshot checker on a hand-made history (no cluster): each kind of bad image it must catch is
 * caught, and every image a cut could produce passes. Two lanes of 4 blocks: lane 0 owns blocks 0-3, lane 1 4-7.
 */
class SnapshotCheckerTest {
    private SnapshotHistory h;
    private long request;
    private long complete;

    /**
     * lane 0 write 1 -> block 0, acked; lane 1 write 1 -> block 4, acked; the snapshot is requested; lane 0 write 2
     * -> blocks 0-1, acked; lane 1 write 2 -> block 4 issued; lane 0 write 3 -> block 2 issued and fails (never
     * acked); the snapshot is seen ready; lane 1 write 2 acked; lane 0 write 4 -> block 3 issued after it.
     */
    private void history() {
        h = new SnapshotHistory(2, 4);
        h.issue(0, 1, 0, 1);
        h.acked(0, 1);
        h.issue(1, 1, 4, 1);
        h.acked(1, 1);
        request = h.tick();
        h.issue(0, 2, 0, 2);
        h.acked(0, 2);
        h.issue(1, 2, 4, 1);
        h.issue(0, 3, 2, 1);
        complete = h.tick();
        h.acked(1, 2);
        h.issue(0, 4, 3, 1);
    }

    private SnapshotChecker.Result check(long... image) {
        return SnapshotChecker.check(h, request, complete, image);
    }

    @Test
    void everyCutThatCouldHappenPasses() {
        history();
        assertTrue(check(1, 0, 0, 0, 1, 0, 0, 0).clean(), "cut at the request");
        assertTrue(check(2, 2, 0, 0, 1, 0, 0, 0).clean(), "after lane 0's second write");
        assertTrue(check(2, 2, 0, 0, 2, 0, 0, 0).clean(), "after lane 1's second write (in flight at the answer)");
        assertTrue(check(2, 2, 3, 0, 2, 0, 0, 0).clean(), "with the failed write, which may have landed");
        assertTrue(check(2, 2, 3, 0, 1, 0, 0, 0).clean(), "the failed write and lane 1's, both in flight");
    }

    @Test
    void aTornCutIsCaught() {
        history();
        // lane 1's second write was issued after lane 0's second was acknowledged: holding it without lane 0's is torn
        SnapshotChecker.Result r = check(1, 0, 0, 0, 2, 0, 0, 0);
        assertEquals(2, r.torn(), r.toString());
        assertEquals(0, r.tooOld() + r.tooNew() + r.corrupt(), r.toString());
        assertTrue(r.first().getFirst().startsWith("torn: block 0 holds version 1, but 2"), r.toString());
        assertEquals(1, check(2, 0, 0, 0, 2, 0, 0, 0).torn(), "half of lane 0's two-block write is missing");
    }

    @Test
    void aTooOldBlockIsCaught() {
        history();
        SnapshotChecker.Result r = check(0, 0, 0, 0, 1, 0, 0, 0);
        assertEquals(1, r.tooOld(), r.toString());
        assertEquals(0, r.torn() + r.tooNew() + r.corrupt(), r.toString());
        assertTrue(r.first().getFirst().contains("before the snapshot was requested"), r.toString());
    }

    @Test
    void aTooNewBlockIsCaught() {
        history();
        SnapshotChecker.Result r = check(2, 2, 0, 4, 2, 0, 0, 0);
        assertEquals(1, r.tooNew(), r.toString());
        assertTrue(r.first().getFirst().contains("after the snapshot was ready"), r.toString());
        assertTrue(!r.clean());
    }

    @Test
    void aBadStampOrAVersionNeverWrittenToTheBlockIsCorrupt() {
        history();
        assertEquals(1, check(1, 0, 0, 0, -1, 0, 0, 0).corrupt());
        assertEquals(1, check(1, 0, 0, 0, 1, 2, 0, 0).corrupt(), "lane 1's sequence 2 never went to block 5");
        assertEquals(1, check(1, 0, 0, 0, 1, 0, 0, 9).corrupt());
    }

    @Test
    void lastAcknowledgedSkipsWritesInFlightAndFailed() {
        history();
        assertEquals(1, h.lastAckedBefore(0, request));
        assertEquals(2, h.lastAckedBefore(0, complete));
        assertEquals(0, h.lastAckedBefore(2, Long.MAX_VALUE), "block 2's only write failed");
        assertEquals(1, h.lastAckedBefore(4, complete), "lane 1's second write was in flight at the answer");
        assertEquals(2, h.lastAckedBefore(4, Long.MAX_VALUE));
    }

    @Test
    void copiesThatDifferAreDescribedByTheirVersions() {
        history();
        SnapshotTaker.Taken t = new SnapshotTaker.Taken("s", request);
        var a = new SnapshotAudit.Image(new long[]{2, 2, 3, 0, 1, 0, 0, 0}, new byte[]{1});
        var b = new SnapshotAudit.Image(new long[]{2, 2, 0, 0, 1, 0, 0, 0}, new byte[]{2});
        String d = SnapshotAudit.difference(h, t, complete, a, b);
        assertTrue(d.startsWith(" in 1 blocks; first block 2: version 3 (issued at tick "), d);
        assertTrue(d.contains("never acknowledged) and version 0;"), d);
    }

    @Test
    void imagesAreDecodedPerBlock() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment img = a.allocate(4L * BlockStamps.BLOCK);
            BlockStamps.encode(img, BlockStamps.BLOCK, 1, 0, 7);
            BlockStamps.encode(img, 3L * BlockStamps.BLOCK, 2, 0, 8); // block 2's stamp in block 3: corrupt
            assertArrayEquals(new long[]{0, 7, 0, -1}, SnapshotAudit.sequences(img, 4));
        }
    }
}
