package io.rdmablock.rdma.verbs.ffm;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * iWARP "the active side sends first" (RFC 5044 MPA: the responder must not send an FPDU before it has received one
 * from the initiator; siw drops a connection whose MPA reply is followed by early data).
 *
 * <p>What the provider does on an iWARP device, invisible to callers:
 * <ol>
 * <li>Passive side, in {@code accept}: registers an 8-byte flag (64-byte aligned, in the QP's PD) and appends a
 *     16-byte trailer to the accept private data: {@code [magic u32 LE 'RBH1'][flag address u64 LE][rkey u32 LE]}.</li>
 * <li>Active side, in {@code connect} after ESTABLISHED: strips the trailer from the private data it reports and
 *     posts one unsignaled 8-byte RDMA WRITE of the value 1 to the flag ({@link #WR_ID}, from a send-queue entry
 *     reserved at QP creation), before the caller can post anything.</li>
 * <li>Passive side: {@code accept} returns only once the flag reads non-zero (or times out), so the caller's first
 *     SEND always follows a message from the active side.</li>
 * </ol>
 * A completion with {@link #WR_ID} (only on error, since the WRITE is unsignaled) is consumed by the CQ.
 * Private data on iWARP may therefore be at most 56 bytes from the caller plus this trailer (MPA allows 512).
 */
final class IwarpHello implements AutoCloseable {
    /** Reserved work-request id of the internal WRITE; callers must not use it. */
    static final long WR_ID = 0xFFFF_FFFF_5242_4831L;
    static final int MAGIC = 0x31484252; // "RBH1" little-endian
    static final int TRAILER_BYTES = 16;
    private static final VarHandle FLAG = JAVA_LONG.varHandle();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment flag;
    private final MemoryRegion mr;
    private boolean closed;

    /** Remote flag from a trailer. */
    record Trailer(byte[] appData, long address, int rkey) {
    }

    IwarpHello(FfmProtectionDomain pd) {
        this.flag = arena.allocate(64, 64);
        MemoryRegion r;
        try {
            r = pd.registerMemory(flag, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.mr = r;
    }

    /** The caller's private data followed by this side's trailer. */
    byte[] withTrailer(byte[] appData) {
        ByteBuffer b = ByteBuffer.allocate(appData.length + TRAILER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.put(appData).putInt(MAGIC).putLong(flag.address()).putInt(mr.rkey());
        return b.array();
    }

    /** Splits a peer's private data; null when it carries no trailer (the peer is not this provider). */
    static Trailer strip(byte[] pdata) {
        if (pdata.length < TRAILER_BYTES) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(pdata, pdata.length - TRAILER_BYTES, TRAILER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        if (b.getInt() != MAGIC) {
            return null;
        }
        long address = b.getLong();
        int rkey = b.getInt();
        return new Trailer(Arrays.copyOf(pdata, pdata.length - TRAILER_BYTES), address, rkey);
    }

    /** Active side: the internal 8-byte WRITE of 1 to the passive side's flag. */
    void sayHello(FfmQueuePair qp, Trailer peer) {
        flag.set(JAVA_LONG, 0, 1L);
        qp.postInternal(WrOpcode.RDMA_WRITE, flag.address(), 8, mr.lkey(), peer.address(), peer.rkey());
    }

    /** Passive side: waits until the active side's WRITE landed; false on timeout. */
    boolean awaitHello(long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        int spins = 0;
        while ((long) FLAG.getVolatile(flag, 0L) == 0) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            if (++spins < 1000) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(20_000);
            }
        }
        return true;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            mr.close();
        } finally {
            arena.close();
        }
    }
}
