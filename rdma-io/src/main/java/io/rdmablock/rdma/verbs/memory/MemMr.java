package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;

/**
 * A memory-provider region: {@code [address, address + length)} of a native segment with its keys. RDMA READ/WRITE
 * and SEND copy with {@code MemorySegment.copy} at offsets into {@link #segment()} (no view, no allocation), only
 * after {@link #covers} and the access check passed; a closed region is never used.
 */
final class MemMr implements MemoryRegion {
    private final MemPd pd;
    private final MemorySegment segment;
    private final int access;
    private final long address;
    private final long length;
    private int index;
    private int lkey;
    private int rkey;
    private volatile boolean closed;

    MemMr(MemPd pd, MemorySegment segment, int access) {
        this.pd = pd;
        this.segment = segment;
        this.access = access;
        this.address = segment.address();
        this.length = segment.byteSize();
    }

    void setKeys(int index, int lkey, int rkey) {
        this.index = index;
        this.lkey = lkey;
        this.rkey = rkey;
    }

    int index() {
        return index;
    }

    MemPd pd() {
        return pd;
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
        return "MemMr{address=0x" + Long.toHexString(address) + ", length=" + length + ", lkey=0x"
                + Integer.toHexString(lkey) + ", rkey=0x" + Integer.toHexString(rkey) + "}";
    }
}
