package io.rdmablock.rdma.verbs.emu;

import io.rdmablock.rdma.verbs.MemoryRegion;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A memory region of an emulated provider: {@code [address, address + length)} of a native segment with its keys.
 * Shared implementation of the emulated providers, not an API for users. On a device made with region views (the
 * soft provider) regions up to 2 GiB keep one {@link ByteBuffer} view of the whole segment, of which the engines take
 * per-thread duplicates so that no allocation happens per operation; the memory provider copies with
 * {@code MemorySegment.copy} at offsets into {@link #segment()} instead. Either uses a region only after
 * {@link #covers} and the access check passed; a closed region is never used.
 */
public final class EmuMr implements MemoryRegion {
    private final EmuPd pd;
    private final MemorySegment segment;
    private final int access;
    private final long address;
    private final long length;
    private final ByteBuffer base;
    private int index;
    private int lkey;
    private int rkey;
    private volatile boolean closed;

    EmuMr(EmuPd pd, MemorySegment segment, int access) {
        this.pd = pd;
        this.segment = segment;
        this.access = access;
        this.address = segment.address();
        this.length = segment.byteSize();
        this.base = pd.device().mrViews() && length <= Integer.MAX_VALUE ? segment.asByteBuffer() : null;
    }

    void setKeys(int index, int lkey, int rkey) {
        this.index = index;
        this.lkey = lkey;
        this.rkey = rkey;
    }

    /** The region's slot in its device's key table. */
    public int index() {
        return index;
    }

    public EmuPd pd() {
        return pd;
    }

    /** Whole-region view, or null for regions above 2 GiB or on a device without region views. */
    public ByteBuffer base() {
        return base;
    }

    /** True when {@code [addr, addr + len)} lies inside the region. */
    public boolean covers(long addr, long len) {
        return len >= 0 && addr >= address && addr - address <= length - len;
    }

    public boolean isClosed() {
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
        pd.device().resources().untrack(this);
    }

    @Override
    public String toString() {
        return pd.device().mrName() + "{address=0x" + Long.toHexString(address) + ", length=" + length + ", lkey=0x"
                + Integer.toHexString(lkey) + ", rkey=0x" + Integer.toHexString(rkey) + "}";
    }
}
