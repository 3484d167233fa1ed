package io.rdmablock.e2e;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The failover campaign's model and block stamps (no cluster): each rule of docs/chaos.md catches what it names. */
class FailoverCampaignModelTest {
    private static final int B = BlockStamps.BLOCK;

    @Test
    void stampsRoundTripAndAnyFlippedWordIsCorrupt() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(2L * B);
            assertEquals(0, BlockStamps.decode(buf, 0, 7), "zeroes: never written");
            BlockStamps.encode(buf, B, 7, 2, 41);
            assertEquals(41, BlockStamps.decode(buf, B, 7));
            assertEquals(-1, BlockStamps.decode(buf, B, 8), "another block's stamp");
            for (long w : new long[]{3, 4, 5, 300, 511}) {
                long v = buf.get(ValueLayout.JAVA_LONG_UNALIGNED, B + w * 8);
                buf.set(ValueLayout.JAVA_LONG_UNALIGNED, B + w * 8, v ^ 1);
                assertEquals(-1, BlockStamps.decode(buf, B, 7), "word " + w + " flipped");
                buf.set(ValueLayout.JAVA_LONG_UNALIGNED, B + w * 8, v);
            }
            buf.set(ValueLayout.JAVA_LONG_UNALIGNED, 100 * 8, 1);
            assertEquals(-1, BlockStamps.decode(buf, 0, 7), "a torn zero block");
        }
    }

    @Test
    void staleLostBackInTimeAndNeverWrittenAreEachCaught() {
        AckedWriteModel m = new AckedWriteModel(1L << 20);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(B);
            m.issued.set(3, 6);
            BlockStamps.encode(buf, 0, 3, 0, 5);
            assertNull(m.checkRead(buf, 0, 3, 5, 0, "read"), "the acknowledged value");
            assertNull(m.checkRead(buf, 0, 3, 4, 0, "read"), "a later value than the acknowledged one");
            assertEquals(5, m.observed.get(3));
            assertTrue(m.checkRead(buf, 0, 3, 6, 0, "read").startsWith("stale"), "superseded by an acked write");
            assertTrue(m.checkRead(buf, 0, 3, 6, 0, "read-back").startsWith("lost"), "read-back older than acked");
            assertTrue(m.checkRead(buf, 0, 3, 0, 6, "read").startsWith("stale"), "back in time");
            BlockStamps.encode(buf, 0, 3, 0, 7);
            assertTrue(m.checkRead(buf, 0, 3, 0, 0, "read").startsWith("corrupt"), "never issued");
            assertEquals(2, m.stale.get());
            assertEquals(1, m.corrupt.get());
        }
    }

    @Test
    void pauseIsTheLongestGapIncludingTheOneStillOpen() {
        IoPause p = new IoPause();
        p.open(1_000);
        p.complete(1_100);
        p.complete(1_900);
        p.complete(2_000);
        assertEquals(800, p.close(2_100));
        p.open(5_000);
        p.complete(5_010);
        assertEquals(990, p.close(6_000), "no completion since 5 010");
    }

    @Test
    void mgmtLeaderKillIsOptInAndNeedsTheHighlyAvailablePlane() {
        assertTrue(!FaultKind.all(false).contains(FaultKind.MGMT_LEADER_KILL), "not in all without --etcd");
        assertTrue(FaultKind.all(true).contains(FaultKind.MGMT_LEADER_KILL));
        assertEquals(FaultKind.values().length - 1, FaultKind.all(false).size());
        assertEquals(FaultKind.MGMT_LEADER_KILL, FaultKind.of("mgmt-leader-kill"));
        assertTrue(FaultKind.skipReason(FaultKind.MGMT_LEADER_KILL, true, "x", false).contains("--etcd 3 --mgmt 3"));
        assertNull(FaultKind.skipReason(FaultKind.MGMT_LEADER_KILL, false, "x", true));
        assertEquals("no ns", FaultKind.skipReason(FaultKind.CUT_PRIMARY_MGMT, false, "no ns", true));
        assertNull(FaultKind.skipReason(FaultKind.PRIMARY_KILL, false, "no ns", false));
        var e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> CampaignMgmtPlane.checkSizes(3, 1));
        assertTrue(e.getMessage().startsWith("invalid --mgmt: --mgmt=1"), e.getMessage());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> CampaignMgmtPlane.checkSizes(0, 3));
        CampaignMgmtPlane.checkSizes(3, 3);
    }

    @Test
    void leaderAnswerNamesOneOfThePlanesUrls() {
        var urls = java.util.List.of("http://127.0.0.1:1", "http://127.0.0.1:2");
        assertEquals(1, CampaignMgmtPlane.leaderOf(
                "{\"leader\":\"http://127.0.0.1:2/\",\"self\":\"http://127.0.0.1:1\",\"isLeader\":false}", urls));
        assertEquals(-1, CampaignMgmtPlane.leaderOf("{\"leader\":null,\"self\":\"http://127.0.0.1:1\"}", urls));
        assertEquals(-1, CampaignMgmtPlane.leaderOf("{\"leader\":\"http://10.0.0.9:2\"}", urls), "not ours");
        assertEquals(-1, CampaignMgmtPlane.leaderOf("<html>404", urls));
        assertEquals(-1, CampaignMgmtPlane.leaderOf(null, urls));
    }

    @Test
    void mgmtLeaderKillFailsWithoutACreateOrANewLeaderAndReportsFigures() {
        assertTrue(new MgmtLeaderFault.Result(0, true, 800, 1200, "").ok(true));
        assertTrue(!new MgmtLeaderFault.Result(0, true, -1, 1200, "503").ok(true), "no create within the bound");
        assertTrue(!new MgmtLeaderFault.Result(0, true, 800, -1, "").ok(true), "no new leader");
        assertTrue(new MgmtLeaderFault.Result(0, false, 800, -1, "").ok(false), "servers without /v1/leader");
        String d = new MgmtLeaderFault.Result(1, true, -1, 900, "503 no leader").describe("http://h:2");
        assertTrue(d.contains("NOT ANSWERED") && d.contains("after 900 ms") && d.contains("503 no leader"), d);
        assertEquals(" create_ms_max=950 create_ms_all=[950,-1]",
                CampaignReport.figures("create_ms", java.util.List.of(950L, -1L)));
        assertEquals("", CampaignReport.figures("elect_ms", java.util.List.of()));
    }
}
