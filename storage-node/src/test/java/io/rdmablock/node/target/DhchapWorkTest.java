package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.auth.DhGroup;
import io.rdmablock.rdma.fabric.auth.DhchapController;
import io.rdmablock.nvme.auth.DhchapHash;
import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.nvme.auth.DhchapSecret;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link DhchapWork}: computations on its workers, the DH CPU budget per peer address, the limits' bounds. */
@Timeout(30)
class DhchapWorkTest {
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000aa";
    private static final String SUB = "nqn.2026-11.io.rdmablock:volume:w";
    private final DhchapSecret secret = DhchapSecret.generate(1, 32, RawAuth.RANDOM);

    /** A controller that got a Negotiate for ffdhe2048: its Challenge needs a key pair (a few ms of CPU). */
    private DhchapController negotiated(int tid) {
        DhchapController c = new DhchapController(SUB, HOST, secret, null, new DhchapController.Policy(
                List.of(DhchapHash.SHA_256), List.of(DhGroup.FFDHE2048)), t -> true, RawAuth.RANDOM);
        c.send(new DhchapHost(HOST, SUB, secret, null, tid, RawAuth.RANDOM).negotiate());
        assertTrue(c.computePending());
        return c;
    }

    private static void await(DhchapWork.Job job) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!job.done() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertTrue(job.done(), "computation done within 10 s");
    }

    @Test
    void shouldComputeOnAWorkerAndStopWhenTheAddressBudgetIsSpent() throws Exception {
        // 1 unit a second, burst 1: one ffdhe2048 exponentiation (1 unit) spends it, whatever the machine's speed
        try (DhchapWork w = new DhchapWork(new DhchapLimits(1, 4, 1, 1, 3, 1000))) {
            InetAddress a = InetAddress.getByName("127.0.0.2");
            InetAddress b = InetAddress.getByName("127.0.0.3");
            DhchapController c = negotiated(1);
            long now = System.nanoTime();
            DhchapWork.Job job = w.submit(a, c, now);
            assertNotNull(job);
            await(job);
            assertNull(job.error());
            assertFalse(c.computePending(), "the key pair was made on the worker");
            assertNull(w.submit(a, negotiated(2), now + 1_000_000L), "address a spent its budget");
            DhchapWork.Job other = w.submit(b, negotiated(3), now + 1_000_000L);
            assertNotNull(other, "another address has its own budget");
            await(other);
            assertNull(w.submit(a, negotiated(4), now + 900_000_000L), "0.9 units back after 0.9 s: not yet");
            DhchapWork.Job again = w.submit(a, negotiated(5), now + 1_001_000_000L);
            assertNotNull(again, "one unit back after 1 s");
            await(again);
        }
    }

    @Test
    void shouldRefuseLimitsOutOfBoundsNamingTheProperty() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new DhchapLimits(0, 64, 16, 128, 3, 1000));
        assertEquals("invalid rdmablock.node.dhchap.threads: value=0, min=1, max=16", e.getMessage());
        assertEquals(DhchapLimits.DEFAULTS, io.rdmablock.node.NodeConfiguration.from(p -> null).target().dhchap());
    }
}
