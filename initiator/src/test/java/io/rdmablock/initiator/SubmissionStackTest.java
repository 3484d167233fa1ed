package io.rdmablock.initiator;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SubmissionStackTest {

    private static IoRequest req(long slba) {
        return new IoRequest(0, slba, 1, null, 0, null);
    }

    @Test
    void shouldDrainInSubmissionOrder() {
        SubmissionStack s = new SubmissionStack();
        for (int i = 0; i < 5; i++) {
            s.push(req(i));
        }
        IoRequest r = s.drain();
        for (int i = 0; i < 5; i++) {
            assertEquals(i, r.slba);
            r = r.next;
        }
        assertNull(r);
        assertTrue(s.isEmpty());
        assertNull(s.drain());
    }

    @Test
    void shouldLoseNothingUnderConcurrentProducers() throws Exception {
        SubmissionStack s = new SubmissionStack();
        int producers = 4;
        int each = 20_000;
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            long base = (long) p * each;
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < each; i++) {
                    s.push(req(base + i));
                }
            }));
        }
        boolean[] seen = new boolean[producers * each];
        long[] lastPerProducer = new long[producers];
        java.util.Arrays.fill(lastPerProducer, -1);
        int count = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (count < seen.length && System.nanoTime() < deadline) {
            for (IoRequest r = s.drain(); r != null; r = r.next) {
                int p = (int) (r.slba / each);
                assertTrue(r.slba > lastPerProducer[p], "per-producer order kept");
                lastPerProducer[p] = r.slba;
                seen[(int) r.slba] = true;
                count++;
            }
        }
        for (Thread t : threads) {
            t.join(5000);
        }
        assertEquals(seen.length, count);
    }
}
