package io.rdmablock.nvmf.host;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CidAllocatorTest {

    @Test
    void shouldDropLateCompletionOfTimedOutCommandAfterSlotReuse() {
        CidAllocator a = new CidAllocator(1);
        int slot = a.allocate();
        int oldCid = a.cid(slot);
        a.release(slot); // timed out, completed locally
        int again = a.allocate();
        assertEquals(slot, again);
        int newCid = a.cid(again);
        assertNotEquals(oldCid, newCid);
        assertEquals(-1, a.lookup(oldCid), "late completion of the old command must be dropped");
        assertEquals(again, a.lookup(newCid), "the new command still completes with its own cid");
    }

    @Test
    void shouldDropDuplicateCompletion() {
        CidAllocator a = new CidAllocator(127);
        int slot = a.allocate();
        int cid = a.cid(slot);
        assertEquals(slot, a.lookup(cid));
        a.release(slot);
        assertEquals(-1, a.lookup(cid), "second completion for the same cid must be dropped");
    }

    @Test
    void shouldGiveEveryOutstandingCommandADistinctCid() {
        CidAllocator a = new CidAllocator(127);
        Set<Integer> cids = new HashSet<>();
        for (int i = 0; i < 127; i++) {
            int s = a.allocate();
            assertTrue(s >= 0);
            assertTrue(cids.add(a.cid(s)));
            assertTrue(a.cid(s) >= 0 && a.cid(s) <= 0xFFFF);
        }
        assertFalse(a.hasFree());
        assertEquals(-1, a.allocate());
    }

    @Test
    void shouldNotRepeatACidForASlotWithinItsGenerationSpace() {
        CidAllocator a = new CidAllocator(127); // 7 slot bits, 9 generation bits
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 512; i++) {
            int s = a.allocate();
            assertEquals(0, s);
            assertTrue(seen.add(a.cid(s)), "cid repeated after " + i + " reuses");
            a.release(s);
        }
    }

    @Test
    void shouldRejectUnknownSlotBits() {
        CidAllocator a = new CidAllocator(100); // 7 slot bits, slots 100..127 do not exist
        a.allocate();
        assertEquals(-1, a.lookup(120));
        assertEquals(-1, a.lookup(0xFFFF));
    }

    @Test
    void shouldRefuseToReleaseAFreeSlot() {
        CidAllocator a = new CidAllocator(4);
        assertThrows(IllegalStateException.class, () -> a.release(0));
        assertThrows(IllegalArgumentException.class, () -> new CidAllocator(0));
    }
}
