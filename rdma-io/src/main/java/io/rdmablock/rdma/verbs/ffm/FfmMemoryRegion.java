package io.rdmablock.rdma.verbs.ffm;

import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.VerbsException;
import java.lang.foreign.MemorySegment;

/** An {@code ibv_mr}. {@link #access()} is what the caller asked for (iWARP may have added REMOTE_WRITE). */
final class FfmMemoryRegion implements MemoryRegion {
    private final FfmProtectionDomain pd;
    private final MemorySegment mr;
    private final MemorySegment segment;
    private final int access;
    private final int lkey;
    private final int rkey;
    private boolean closed;

    FfmMemoryRegion(FfmProtectionDomain pd, MemorySegment mr, MemorySegment segment, int access, int lkey, int rkey) {
        this.pd = pd;
        this.mr = mr;
        this.segment = segment;
        this.access = access;
        this.lkey = lkey;
        this.rkey = rkey;
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public long address() {
        return segment.address();
    }

    @Override
    public long length() {
        return segment.byteSize();
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    @Override
    public int access() {
        return access;
    }

    /** {@code ibv_dereg_mr(3)}; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        pd.forget(this);
        int rc;
        try {
            rc = (int) Native.IBV_DEREG_MR.invokeExact(Native.errnoSegment(), mr);
        } catch (Throwable t) {
            throw new VerbsException("ibv_dereg_mr failed: " + t, 0, t);
        }
        if (rc != 0) {
            throw Native.fail("ibv_dereg_mr", rc > 0 ? rc : Native.errno(),
                    "lengthBytes=" + segment.byteSize() + ", lkey=0x" + Integer.toHexString(lkey));
        }
    }
}
