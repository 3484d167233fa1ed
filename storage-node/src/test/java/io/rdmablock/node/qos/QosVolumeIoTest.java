package io.rdmablock.node.qos;

import io.rdmablock.mgmt.client.VolumeQos;
import io.rdmablock.node.target.Request;
import io.rdmablock.node.target.VolumeIo;
import io.rdmablock.rdma.fabric.Opcodes;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link QosVolumeIo}: over-budget commands wait in the queue (in order) and complete; none is failed. */
class QosVolumeIoTest {
    private static final long MS = 1_000_000L;
    private static final long T0 = 5_000_000 * MS;

    /** An inner handle that completes what it started at its next poll, with status 0. */
    private static final class ImmediateIo implements VolumeIo {
        final ArrayDeque<Request> running = new ArrayDeque<>();
        final List<Integer> startedCids = new ArrayList<>();
        boolean closed;

        @Override
        public int start(Request r, long nowNs) {
            startedCids.add(r.cid);
            running.add(r);
            return IN_FLIGHT;
        }

        @Override
        public int poll(Completions sink, int max, long nowNs) {
            int n = 0;
            while (!running.isEmpty() && n < max) {
                sink.completed(running.poll(), 0);
                n++;
            }
            return n;
        }

        @Override
        public int inFlight() {
            return running.size();
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private static Request[] requests(Arena arena, int n, int opcode) {
        Request[] rs = new Request[n];
        for (int i = 0; i < n; i++) {
            rs[i] = new Request(i, arena.allocate(4096, 4096), 0, 0, 0, 0, arena.allocate(16), 0);
            rs[i].opcode = opcode;
            rs[i].cid = i;
            rs[i].storeLengthBytes = 4096;
        }
        return rs;
    }

    @Test
    void overBudgetCommandsAreHeldInOrderAndCompleteWithoutError() {
        VolumeQosLimiter limiter = new VolumeQosLimiter();
        limiter.apply(VolumeQos.ofIops(100), 1L << 30, T0); // 1 per 10 ms, 5 in the bucket
        ImmediateIo inner = new ImmediateIo();
        List<Integer> completed = new ArrayList<>();
        List<Integer> statuses = new ArrayList<>();
        VolumeIo.Completions sink = (r, status) -> {
            completed.add(r.cid);
            statuses.add(status);
        };
        try (Arena arena = Arena.ofConfined()) {
            Request[] rs = requests(arena, 32, Opcodes.IO_READ);
            QosVolumeIo io = new QosVolumeIo(inner, limiter, rs.length, new io.rdmablock.node.metrics.ForegroundLatency());
            for (Request r : rs) {
                assertEquals(VolumeIo.IN_FLIGHT, io.start(r, T0));
            }
            assertEquals(5, inner.startedCids.size(), "the bucket's 50 ms go at once");
            assertEquals(27, io.held());
            assertEquals(27, limiter.heldCommands());
            assertEquals(32, io.inFlight());
            long now = T0;
            while (completed.size() < rs.length) {
                now += MS / 2;
                io.poll(sink, 32, now);
                assertTrue(now - T0 < 400 * MS, "all done within ~270 ms, completed=" + completed.size());
            }
            for (int i = 0; i < rs.length; i++) {
                assertEquals(i, inner.startedCids.get(i), "started in arrival order");
                assertEquals(0, statuses.get(i), "never failed");
            }
            assertEquals(0, io.held());
            assertEquals(0, limiter.heldCommands());
            assertTrue(limiter.delayedSeconds() > 0, "held time counted");
            assertTrue(now - T0 >= 250 * MS, "27 held commands at 1 per 10 ms took >= 250 ms: " + (now - T0));
            io.close();
            assertTrue(inner.closed);
        }
    }

    @Test
    void completedCommandsAreTimedForTheBackgroundBudgetWithoutTheirHeldTime() {
        VolumeQosLimiter limiter = new VolumeQosLimiter();
        limiter.apply(VolumeQos.ofIops(100), 1L << 30, T0); // 5 in the bucket, then 1 per 10 ms
        ImmediateIo inner = new ImmediateIo();
        io.rdmablock.node.metrics.ForegroundLatency foreground = new io.rdmablock.node.metrics.ForegroundLatency();
        try (Arena arena = Arena.ofConfined()) {
            Request[] rs = requests(arena, 6, Opcodes.IO_READ);
            QosVolumeIo io = new QosVolumeIo(inner, limiter, rs.length, foreground);
            for (Request r : rs) {
                io.start(r, T0);
            }
            assertEquals(1, io.held());
            assertEquals(0, foreground.commands(), "nothing completed yet");
            List<Integer> completed = new ArrayList<>();
            io.poll((r, status) -> completed.add(r.cid), 32, T0 + 20 * MS);
            assertEquals(6, completed.size());
            assertEquals(6, foreground.commands(), "every completed command is timed");
            // five started at T0 and done at T0 + 20 ms; the held one started (and done) in that poll: 0
            assertEquals(100 * MS, foreground.latencyNs(), "held time left out");
        }
    }

    @Test
    void flushPassesHeldCommandsAndCloseDropsTheHeld() {
        VolumeQosLimiter limiter = new VolumeQosLimiter();
        limiter.apply(VolumeQos.ofIops(1), 1L << 30, T0);
        ImmediateIo inner = new ImmediateIo();
        try (Arena arena = Arena.ofConfined()) {
            Request[] writes = requests(arena, 3, Opcodes.IO_WRITE);
            QosVolumeIo io = new QosVolumeIo(inner, limiter, 4, new io.rdmablock.node.metrics.ForegroundLatency());
            for (Request r : writes) {
                io.start(r, T0);
            }
            assertEquals(2, io.held());
            Request flush = requests(arena, 1, Opcodes.IO_FLUSH)[0];
            flush.cid = 99;
            io.start(flush, T0);
            assertEquals(List.of(0, 99), inner.startedCids, "the flush is not limited nor queued behind");
            io.close();
            assertEquals(0, limiter.heldCommands(), "dropped at close");
        }
    }

    @Test
    void liftingTheLimitReleasesHeldCommandsAtTheNextRound() {
        VolumeQosLimiter limiter = new VolumeQosLimiter();
        limiter.apply(VolumeQos.ofIops(1), 1L << 30, T0);
        ImmediateIo inner = new ImmediateIo();
        try (Arena arena = Arena.ofConfined()) {
            Request[] rs = requests(arena, 8, Opcodes.IO_READ);
            QosVolumeIo io = new QosVolumeIo(inner, limiter, rs.length, new io.rdmablock.node.metrics.ForegroundLatency());
            for (Request r : rs) {
                io.start(r, T0);
            }
            assertEquals(7, io.held());
            limiter.apply(VolumeQos.NONE, 1L << 30, T0);
            List<Integer> done = new ArrayList<>();
            io.poll((r, s) -> done.add(r.cid), 32, T0 + 1);
            assertEquals(8, done.size());
            assertEquals(0, io.inFlight());
        }
    }
}
