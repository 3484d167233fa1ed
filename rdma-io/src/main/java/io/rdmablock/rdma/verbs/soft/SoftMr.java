package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A soft memory region. Regions up to 2 GiB keep one {@link ByteBuffer} view of the whole segment; engines take
 * per-thread duplicates of it ({@link ViewCache}) so that no allocation happens per operation.
 */
final class SoftMr implements MemoryRegion {
    private final SoftPd pd;
    private final MemorySegment segment;
    private final int access;
    private final long address;
    private final long length;
    private final ByteBuffer base;
    private int index;
    private int lkey;
    private int rkey;
    private volatile boolean closed;

    SoftMr(SoftPd pd, MemorySegment segment, int access) {
        this.pd = pd;
        this.segment = segment;
        this.access = access;
        this.address = segment.address();
        this.length = segment.byteSize();
        this.base = length <= Integer.MAX_VALUE ? segment.asByteBuffer() : null;
    }

    void setKeys(int index, int lkey, int rkey) {
        this.index = index;
        this.lkey = lkey;
        this.rkey = rkey;
    }

    int index() {
        return index;
    }

    SoftPd pd() {
        return pd;
    }

    /** Whole-region view, or null for regions above 2 GiB. */
    ByteBuffer base() {
        return base;
    }

    /** True when {@code [addr, addr + len)} lies inside the region. */
    boolean covers(long addr, long len) {
        return len >= 0 && addr >= address && addr - address <= length - len;
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long length() {
        return length;
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

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        pd.device().removeMr(this);
        pd.device().provider().untrack(this);
    }

    @Override
    public String toString() {
        return "SoftMr{address=0x" + Long.toHexString(address) + ", length=" + length + ", lkey=0x"
                + Integer.toHexString(lkey) + ", rkey=0x" + Integer.toHexString(rkey) + "}";
    }
}
