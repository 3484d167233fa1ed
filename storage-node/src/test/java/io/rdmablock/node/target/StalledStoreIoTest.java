package io.rdmablock.node.target;

import io.rdmablock.node.store.StoreFaults;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Case C7: one backend WRITE on vol1 is held 10 s by the store's fault injection ({@link StoreFaults}); meanwhile the
 * management plane resizes or deletes vol1 (the calls {@code MgmtSync} makes), the host keeps sending keep-alives
 * with KATO 5 s, and a second host does I/O on vol2. Expected: keep-alives answered at once, the controller survives
 * past KATO, the management call returns at once and does not corrupt the stalled write, vol2's latency is not
 * affected.
 */
class StalledStoreIoTest extends TargetTestBase {
    static final long STALL_OFFSET = 1L << 20;
    static final long STALL_NS = TimeUnit.SECONDS.toNanos(10);
    static final int KATO_MS = 5000;
    static final String HOST2 = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000002";
    static final String HOST3 = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000003";

    String subnqn2;
    RawHost admin2;
    RawHost io2;

    @BeforeEach
    void setUp() {
        StoreVolume vol2 = f.store.create(new VolumeSpec("vol2", "vol2", 64L << 20, LBA, Set.of("*")));
        subnqn2 = f.target.addVolume(vol2, null).subnqn();
        f.store.setFaults(StoreFaults.stall("vol1", STALL_OFFSET, STALL_NS, 1));
        connect(TargetFixture.HOSTNQN, KATO_MS);
        admin2 = f.connect(0, 32, subnqn2, HOST2, 0xFFFF, KATO_MS);
        io2 = f.connect(1, 8, subnqn2, HOST2, TargetFixture.cntlid(admin2), 0);
    }

    @AfterEach
    void tearDown() {
        TargetFixture.close(io2, admin2); // then vol1's host and the target
    }

    @Test
    void shouldAnswerKeepAlivesAndResizeAtOnceWhileAWriteIsStalled() {
        long[] baseline = otherVolumeLatencies(40);
        long postedNs = postStalledWrite();

        long t0 = System.nanoTime();
        f.store.resize("vol1", 128L << 20);
        long resizeMs = (System.nanoTime() - t0) / MS;
        assertTrue(resizeMs < 2000, "resize during a stalled write took " + resizeMs + " ms");

        RawHost.Cqe stalled = null;
        long[] during = new long[2000];
        int n = 0;
        long nextKeepAliveNs = System.nanoTime();
        long maxKeepAliveMs = 0;
        int keepAlives = 0;
        while (stalled == null && System.nanoTime() - postedNs < STALL_NS + TimeUnit.SECONDS.toNanos(5)) {
            if (System.nanoTime() - nextKeepAliveNs >= 0) {
                maxKeepAliveMs = Math.max(maxKeepAliveMs, keepAlive(admin, keepAlives++));
                keepAlive(admin2, keepAlives);
                nextKeepAliveNs += KATO_MS / 2 * MS;
            }
            if (n < during.length) {
                during[n++] = otherVolumeIo(n);
            }
            stalled = io.await(5 * MS);
        }
        long stalledMs = (System.nanoTime() - postedNs) / MS;
        assertNotNull(stalled, "stalled write never completed");
        assertEquals(0, stalled.status(), NvmeStatus.describe(stalled.status()));
        assertEquals(41, stalled.cid());
        assertTrue(stalledMs >= 9_000, "the write was not held: completed after " + stalledMs + " ms");
        assertTrue(maxKeepAliveMs < 1000, "keep-alive answered after " + maxKeepAliveMs + " ms");
        assertTrue(keepAlives >= 4, "keep-alives sent: " + keepAlives);

        // the controller outlived KATO + grace, the write landed, the namespace grew
        assertEquals(2, f.target.controllerCount());
        io.data().asSlice(8192, 4096).fill((byte) 0);
        RawHost.Cqe read = io.exec(io.rw(0, Opcodes.IO_READ, 42, STALL_OFFSET / LBA, 8, false, 8192, 4096));
        assertEquals(0, read.status(), NvmeStatus.describe(read.status()));
        assertEquals(-1, io.data().asSlice(8192, 4096).mismatch(io.data().asSlice(0, 4096)), "stalled write data");
        assertEquals(0, admin.identify(Opcodes.CNS_NAMESPACE, 1).status());
        assertEquals((128L << 20) / LBA, IdentifyNamespaceDescriptor.decode(admin.data()).sizeBlocks());
        assertOtherVolumeUnaffected(baseline, Arrays.copyOf(during, n));
        System.out.printf("C7 resize: resizeMs=%d, stalledWriteMs=%d, keepAlives=%d, maxKeepAliveMs=%d%n",
                resizeMs, stalledMs, keepAlives, maxKeepAliveMs);
    }

    @Test
    void shouldDeleteAtOnceWhileAWriteIsStalledAndNeverLandItInALaterVolume() throws Exception {
        long[] baseline = otherVolumeLatencies(40);
        long postedNs = postStalledWrite();

        long t0 = System.nanoTime();
        f.target.removeVolume("vol1");
        f.store.delete("vol1");
        long deleteMs = (System.nanoTime() - t0) / MS;
        assertTrue(deleteMs < 2000, "delete during a stalled write took " + deleteMs + " ms");
        assertFalse(Files.exists(dir.resolve("volumes").resolve("vol1.vol")), "data file of the deleted volume");
        // the same id again, exported to another host: the late write must not land in it
        StoreVolume again = f.store.create(new VolumeSpec("vol1", "vol1", 64L << 20, LBA, Set.of("*")));
        f.target.addVolume(again, null);

        long[] during = new long[2000];
        int n = 0;
        long nextKeepAliveNs = System.nanoTime();
        long maxKeepAliveMs = 0;
        int keepAlives = 0;
        while (System.nanoTime() - postedNs < STALL_NS + 500 * MS) {
            if (System.nanoTime() - nextKeepAliveNs >= 0) {
                maxKeepAliveMs = Math.max(maxKeepAliveMs, keepAlive(admin2, keepAlives++));
                nextKeepAliveNs += KATO_MS / 2 * MS;
            }
            if (n < during.length) {
                during[n++] = otherVolumeIo(n);
            } else {
                assertNull(io2.await(5 * MS), "no vol2 I/O outstanding");
            }
        }
        assertTrue(maxKeepAliveMs < 1000, "keep-alive answered after " + maxKeepAliveMs + " ms");
        assertEquals(1, f.target.controllerCount(), "only vol2's controller is left");
        RawHost.Cqe old = io.await(100 * MS);
        assertTrue(old == null || old.error() != null || old.status() != 0,
                "the write on the deleted volume must not succeed: " + old);

        try (RawHost a3 = f.connect(0, 32, f.subnqn, HOST3, 0xFFFF, 0);
             RawHost i3 = f.connect(1, 8, f.subnqn, HOST3, TargetFixture.cntlid(a3), 0)) {
            i3.data().asSlice(0, 4096).fill((byte) 0x77);
            RawHost.Cqe r = i3.exec(i3.rw(0, Opcodes.IO_READ, 43, STALL_OFFSET / LBA, 8, false, 0, 4096));
            assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
            assertEquals(-1, i3.data().asSlice(0, 4096).mismatch(MemorySegment.ofArray(new byte[4096])),
                    "the recreated volume must read zeroes");
        }
        assertOtherVolumeUnaffected(baseline, Arrays.copyOf(during, n));
        System.out.printf("C7 delete: deleteMs=%d, keepAlives=%d, maxKeepAliveMs=%d%n", deleteMs, keepAlives,
                maxKeepAliveMs);
    }

    // ---- helpers ----

    /** WRITE (cid 41) of 4 KiB on vol1 at STALL_OFFSET, held by the store; returns when it was posted (nanoTime). */
    private long postStalledWrite() {
        fill(io.data().asSlice(0, 4096), 0x5A);
        long postedNs = System.nanoTime();
        io.rw(0, Opcodes.IO_WRITE, 41, STALL_OFFSET / LBA, 8, false, 0, 4096);
        io.post(0, 64);
        assertNull(io.await(300 * MS), "the stalled write must not complete yet");
        return postedNs;
    }

    /** Sends a keep-alive; returns its round trip in ms. */
    private static long keepAlive(RawHost admin, int cid) {
        long t = System.nanoTime();
        RawHost.Cqe c = admin.exec(admin.keepAlive(0, 100 + (cid & 0xFF)));
        assertNotNull(c, "keep-alive unanswered");
        assertEquals(0, c.status(), "keep-alive status " + c);
        return (System.nanoTime() - t) / MS;
    }

    /** One 4 KiB WRITE or READ on vol2; returns its latency in ns. */
    private long otherVolumeIo(int i) {
        int op = (i & 1) == 0 ? Opcodes.IO_WRITE : Opcodes.IO_READ;
        long t = System.nanoTime();
        RawHost.Cqe c = io2.exec(io2.rw(0, op, 200 + (i & 0xFF), (i % 64) * 8L, 8, false, 0, 4096));
        long ns = System.nanoTime() - t;
        assertNotNull(c, "vol2 I/O unanswered");
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        return ns;
    }

    private long[] otherVolumeLatencies(int count) {
        long[] l = new long[count];
        for (int i = 0; i < count; i++) {
            l[i] = otherVolumeIo(i);
        }
        return l;
    }

    private static void assertOtherVolumeUnaffected(long[] baseline, long[] during) {
        long[] b = baseline.clone();
        long[] d = during.clone();
        Arrays.sort(b);
        Arrays.sort(d);
        long bP50 = b[b.length / 2];
        long dP50 = d[d.length / 2];
        long dP99 = d[(int) (d.length * 0.99)];
        long dMax = d[d.length - 1];
        System.out.printf("C7 vol2 4 KiB I/O latency: baseline p50=%d us (n=%d); during stall p50=%d us, p99=%d us, "
                + "max=%d us (n=%d)%n", bP50 / 1000, b.length, dP50 / 1000, dP99 / 1000, dMax / 1000, d.length);
        assertTrue(d.length >= 50, "too few vol2 I/Os during the stall: " + d.length);
        // generous bounds: 2 shared cores; a stalled queue must not add a poll-round-sized delay to its neighbours
        assertTrue(dP50 < Math.max(10 * bP50, 20 * MS), "vol2 p50 during the stall " + dP50 / 1000 + " us");
        assertTrue(dMax < 1000 * MS, "vol2 max during the stall " + dMax / 1000 + " us");
    }

    private static void fill(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, seed * 0x9E3779B97F4A7C15L + i);
        }
    }
}
