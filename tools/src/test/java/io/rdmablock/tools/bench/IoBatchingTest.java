package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.BlockDevice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * iodepth_batch, iodepth_batch_complete_min/_max and iodepth_low ({@link IoBatching}) end to end: a device that
 * completes an I/O only when the test says so ({@link HeldDevice}), so after each completion the I/Os the job
 * submitted are counted exactly. The expected counts are fio's do_io/wait_for_completions (backend.c) on an
 * asynchronous engine: fio's null engine completes at once and psync is synchronous, so fio itself cannot show them.
 */
@Timeout(60)
class IoBatchingTest {
    @TempDir
    Path dir;

    /** Submitted I/Os wait in {@link #held} until the test completes them, oldest first. */
    static final class HeldDevice implements BlockDevice {
        final LinkedBlockingDeque<CompletableFuture<Void>> held = new LinkedBlockingDeque<>();
        final Arena arena = Arena.ofShared();

        @Override public long capacityBytes() { return 1 << 20; }
        @Override public int lbaSize() { return 512; }
        @Override public int maxTransferBytes() { return 1 << 20; }
        @Override public boolean zeroesAfterTrim() { return false; }
        @Override public CompletableFuture<Void> read(long o, MemorySegment d) { return hold(); }
        @Override public CompletableFuture<Void> write(long o, MemorySegment s, boolean fua) { return hold(); }
        @Override public CompletableFuture<Void> flush() { return CompletableFuture.completedFuture(null); }
        @Override public CompletableFuture<Void> writeZeroes(long o, long l) { return hold(); }
        @Override public CompletableFuture<Void> trim(long o, long l) { return hold(); }
        @Override public MemorySegment allocateBuffer(long l) { return arena.allocate(l, 4096); }
        @Override public void freeBuffer(MemorySegment b) { }
        @Override public void close() { }

        private CompletableFuture<Void> hold() {
            CompletableFuture<Void> f = new CompletableFuture<>();
            held.add(f);
            return f;
        }
    }

    /**
     * Runs {@code options} (rw=read, number_ios=ios) on a held device: waits for the first submissions, then completes
     * the oldest I/O one at a time and returns, per completion, how many I/Os the job submitted in response; the
     * first element is the initial fill.
     */
    List<Integer> responses(int ios, String... options) throws Exception {
        List<String> o = new ArrayList<>(List.of("rw=read", "bs=4k", "number_ios=" + ios));
        o.addAll(List.of(options));
        JobSpec spec = PatternFioTest.spec("b", o.toArray(String[]::new));
        HeldDevice dev = new HeldDevice();
        Thread run = Thread.ofPlatform().start(() -> {
            try {
                BenchRun.run(new ArrayList<>(List.of(spec)), null, () -> dev, null, BenchRun.Progress.none(), dir);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        List<Integer> out = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        CompletableFuture<Void> first = dev.held.poll(30, TimeUnit.SECONDS);
        assertNotNull(first, "no I/O submitted");
        // the initial fill is submitted by one thread in one go: wait until it stops growing
        int before = -1;
        while (before != dev.held.size() && System.nanoTime() < deadline) {
            before = dev.held.size();
            run.join(200);
        }
        out.add(dev.held.size() + 1);
        dev.held.addFirst(first);
        for (int done = 0; done < ios && System.nanoTime() < deadline; done++) {
            CompletableFuture<Void> f = dev.held.pollFirst(5, TimeUnit.SECONDS);
            assertNotNull(f, "nothing in flight after " + done + " completions: " + out);
            int inFlight = dev.held.size();
            f.complete(null); // the job's refill runs in this thread, before complete returns
            out.add(dev.held.size() - inFlight);
        }
        run.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(run.isAlive(), "job did not end");
        return out;
    }

    @Test
    void shouldRefillAFullQueueOnlyAtIodepthLowInBatches() throws Exception {
        // iodepth 16, low 4: fill 16; 11 completions refill nothing (15..5 in flight), the 12th (4 left) refills 12
        List<Integer> r = responses(40, "iodepth=16", "iodepth_batch=8", "iodepth_low=4");
        assertEquals(List.of(16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12),
                r.subList(0, 25));
    }

    @Test
    void shouldReapAtLeastCompleteMinBeforeRefilling() throws Exception {
        List<Integer> r = responses(24, "iodepth=8", "iodepth_batch_complete_min=4", "iodepth_batch_complete_max=8");
        assertEquals(List.of(8, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4), r.subList(0, 13));
    }

    @Test
    void shouldRefillEachCompletionAtTheDefaults() throws Exception {
        List<Integer> r = responses(12, "iodepth=4", "iodepth_batch=2");
        assertEquals(List.of(4, 1, 1, 1, 1), r.subList(0, 5));
    }

    @Test
    void shouldFollowFiosFixupsAndRejectBadValues() {
        IoBatching.Options o = new IoBatching.Options();
        o.set("j", "iodepth_low", "0");
        o.set("j", "iodepth_batch", "64");
        o.set("j", "iodepth_batch_complete_min", "6");
        o.set("j", "iodepth_batch_complete_max", "2");
        IoBatching<Object> b = new IoBatching<>(o, 16);
        assertEquals(16, b.low);
        assertEquals(16, b.submitBatch);
        assertEquals(6, b.completeMax);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PatternFioTest.spec("bad", "iodepth_low=-1"));
        assertTrue(e.getMessage().contains("iodepth_low") && e.getMessage().contains("'bad'")
                && e.getMessage().contains("min=0, max=65535"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PatternFioTest.spec("bad", "iodepth_batch=lots"));
        assertTrue(e.getMessage().contains("iodepth_batch"), e.getMessage());
    }
}
