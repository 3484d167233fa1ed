package io.rdmablock.rdma.verbs;

import static io.rdmablock.rdma.verbs.VerbsTestSupport.assertSameBytes;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.fill;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.rdma;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.send;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmablock.rdma.verbs.VerbsTestSupport.Connection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One burst of RDMA WRITE, SEND and RDMA READ of sizes around the soft provider's receive thresholds (a frame header
 * is 32 bytes; payloads of up to 16 KiB are read through its 64 KiB stage and copied, longer ones straight into
 * place), posted in one chain so that many frames share a socket read: every byte lands where it belongs. Each receive
 * buffer is two scatter/gather elements of {@value #RECV_SGE} bytes, so a SEND payload is split across them (copied
 * from the stage, or read straight into them when it is longer than 16 KiB).
 */
public class BurstSizesTest {
    private static final String PROVIDERS = "io.rdmablock.rdma.verbs.VerbsTestSupport#providers";
    private static final int RW = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;
    private static final int[] SIZES = {1, 31, 32, 33, 480, 481, 4095, 4096, 4097, 16383, 16384, 16385, 65503, 65504,
        65535, 65536, 65537, 100_000};
    private static final int RECV_SGE = 20_000;
    private static final int SEND_MAX = 2 * RECV_SGE;

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldPlaceEveryFrameOfABurstOfMixedSizes(String provider) {
        placeBurst(provider, SIZES);
    }

    /** The sizes around the receive thresholds this test posts, in order. */
    public static int[] thresholdSizes() {
        return SIZES.clone();
    }

    /**
     * Posts one chain of an RDMA WRITE, a SEND (at most {@value #SEND_MAX} bytes) and an RDMA READ of each of
     * {@code sizes} (at most 256 of them), waits for every completion and checks every byte of each placement.
     */
    public static void placeBurst(String provider, int[] sizes) {
        if (sizes.length > 256) {
            throw new IllegalArgumentException("sizes: at most 256 entries, got " + sizes.length);
        }
        long total = 0;
        for (int s : sizes) {
            total += s;
        }
        int wrs = 3 * sizes.length;
        try (Connection c = Connection.open(provider, a -> a.maxSendWr = Math.max(a.maxSendWr, wrs), a -> {
            a.maxRecvSge = 2;
            a.maxRecvWr = Math.max(a.maxRecvWr, sizes.length);
        }, Math.max(256, wrs), s -> { })) {
            MemoryRegion src = c.client.register(total, Access.LOCAL_WRITE);
            MemoryRegion sink = c.client.register(total, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(total, RW);
            MemoryRegion remote = c.server.register(total, RW);
            MemoryRegion rbuf = c.server.register((long) sizes.length * SEND_MAX, Access.LOCAL_WRITE);
            fill(src.segment(), 21);
            fill(remote.segment(), 22);
            for (int i = 0; i < sizes.length; i++) {
                RecvWr r = new RecvWr(2);
                r.wrId = i;
                r.numSge = 2;
                r.sgList[0].set(rbuf, (long) i * SEND_MAX, RECV_SGE);
                r.sgList[1].set(rbuf, (long) i * SEND_MAX + RECV_SGE, RECV_SGE);
                c.server.qp.postRecv(r);
            }
            SendWr head = null;
            SendWr tail = null;
            long off = 0;
            for (int i = 0; i < sizes.length; i++) {
                int s = sizes[i];
                SendWr[] chain = {
                    rdma(3L * i, WrOpcode.RDMA_WRITE, src, off, s, dst, off),
                    send(3L * i + 1, WrOpcode.SEND, src, off, Math.min(s, SEND_MAX)),
                    rdma(3L * i + 2, WrOpcode.RDMA_READ, sink, off, s, remote, off)};
                for (SendWr w : chain) {
                    if (head == null) {
                        head = w;
                    } else {
                        tail.next = w;
                    }
                    tail = w;
                }
                off += s;
            }
            c.client.qp.postSend(head);
            List<WorkCompletion> sent = c.client.take(wrs);
            for (WorkCompletion wc : sent) {
                assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
            }
            Map<Long, WorkCompletion> recvs = new HashMap<>();
            for (WorkCompletion wc : c.server.take(sizes.length)) {
                assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
                recvs.put(wc.wrId, wc);
            }
            off = 0;
            for (int i = 0; i < sizes.length; i++) {
                int s = sizes[i];
                int sl = Math.min(s, SEND_MAX);
                String what = "op " + i + ", size " + s;
                assertSameBytes(src.segment().asSlice(off, s), dst.segment().asSlice(off, s), "RDMA WRITE " + what);
                assertSameBytes(remote.segment().asSlice(off, s), sink.segment().asSlice(off, s), "RDMA READ " + what);
                assertEquals(sl, recvs.get((long) i).byteLen, "SEND length " + what);
                assertSameBytes(src.segment().asSlice(off, sl), rbuf.segment().asSlice((long) i * SEND_MAX, sl),
                        "SEND " + what);
                off += s;
            }
        }
    }
}
