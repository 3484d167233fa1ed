package io.rdmablock.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Destroying a soft queue pair (and its id) whose peer is stopped - connected, but it never reads and never closes
 * (a SIGSTOPped process, a half-open client) - returns promptly and releases the socket: no linger waiting for the
 * peer's end of stream, no waiting for a frame batch the peer will never take. The peer here is a raw TCP socket that
 * completes the {@link CmWire} handshake and then does nothing.
 */
class SoftDestroyTest {
    private static final long T = TimeUnit.SECONDS.toNanos(10);
    /** Far below the 1 s linger / batch-finish bounds a destroy used to wait. */
    private static final long MAX_DESTROY_NS = 250_000_000L;

    @Test
    void shouldDestroyPromptlyWhenThePeerIsIdleAndNeverCloses() throws Exception {
        destroyAgainstStoppedPeer(false);
    }

    @Test
    void shouldDestroyPromptlyWhenThePeerStopsReadingMidStream() throws Exception {
        destroyAgainstStoppedPeer(true);
    }

    private static void destroyAgainstStoppedPeer(boolean fillSocket) throws Exception {
        try (SoftVerbsProvider p = new SoftVerbsProvider();
             CmListener l = p.listen(new InetSocketAddress("127.0.0.1", 0), 4);
             Arena arena = Arena.ofShared();
             SocketChannel peer = SocketChannel.open()) {
            peer.connect(new InetSocketAddress("127.0.0.1", l.localAddress().getPort()));
            peer.configureBlocking(true);
            writeAll(peer, CmWire.encode(CmWire.REQ, 7, 16, 16, new byte[0]));
            CmId s = l.getRequest(T);
            ProtectionDomain pd = s.device().allocPd();
            CompletionQueue cq = s.device().createCq(1024);
            QpInitAttr a = new QpInitAttr().pd(pd).cq(cq);
            a.maxSendWr = 256;
            QueuePair qp = s.createQp(a);
            Thread acceptor = Thread.ofPlatform().start(() -> s.accept(null, T));
            ByteBuffer accept = ByteBuffer.allocate(CmWire.MSG_LENGTH);
            while (accept.hasRemaining()) {
                peer.read(accept);
            }
            assertEquals(CmWire.ACCEPT, accept.get(5));
            writeAll(peer, CmWire.encode(CmWire.RTU, 7, 0, 0, null));
            acceptor.join(10_000);
            MemoryRegion mr = pd.registerMemory(arena.allocate(1 << 20, 4096), Access.LOCAL_WRITE);
            if (fillSocket) {
                // 256 x 1 MiB SENDs: far more than the socket buffers hold; the peer reads none of it
                SendWr w = new SendWr();
                w.opcode = WrOpcode.SEND;
                w.numSge = 1;
                w.sgList[0].set(mr.address(), 1 << 20, mr.lkey());
                for (int i = 0; i < 255; i++) {
                    w.wrId = i;
                    qp.postSend(w);
                }
                // a wait by design: no event says "socket full, batch half written"; the scenario is a destroy
                // while the engine is stuck mid-batch, which only time spent writing produces
                Thread.sleep(200);
            }
            long t0 = System.nanoTime();
            s.disconnect();
            s.close();
            long destroyNs = System.nanoTime() - t0;
            System.out.printf("soft destroy against a stopped peer (%s): %.1f ms%n",
                    fillSocket ? "socket full" : "idle", destroyNs / 1e6);
            assertTrue(destroyNs < MAX_DESTROY_NS, "disconnect + destroy took " + destroyNs / 1_000_000 + " ms");
            // the socket is released: the peer, reading at last, reaches end of stream (after what was in flight)
            long t1 = System.nanoTime();
            ByteBuffer sink = ByteBuffer.allocateDirect(1 << 20);
            peer.socket().setSoTimeout(5_000);
            long n;
            try (var in = peer.socket().getChannel()) {
                do {
                    sink.clear();
                    n = in.read(sink);
                } while (n >= 0 && System.nanoTime() - t1 < TimeUnit.SECONDS.toNanos(5));
            }
            assertTrue(n < 0, "peer did not reach end of stream within 5 s of the destroy");
            mr.close();
            cq.close();
            pd.close();
        }
    }

    private static void writeAll(SocketChannel ch, ByteBuffer b) throws java.io.IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }
}
