package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.emu.EmuMr;
import java.nio.ByteBuffer;

/**
 * Per-thread {@link ByteBuffer} views of registered regions, one per (slot in a gather/scatter vector, region), so
 * that building an I/O vector allocates nothing once warm. Not thread-safe: one per engine direction.
 */
final class ViewCache {
    private final ByteBuffer[][] views;
    private final EmuMr[][] owners;

    ViewCache(int slots) {
        views = new ByteBuffer[slots][];
        owners = new EmuMr[slots][];
        for (int i = 0; i < slots; i++) {
            views[i] = new ByteBuffer[16];
            owners[i] = new EmuMr[16];
        }
    }

    /** A view of {@code [addr, addr + len)} of {@code mr} for vector slot {@code slot}: position..limit is the range. */
    ByteBuffer view(int slot, EmuMr mr, long addr, int len) {
        ByteBuffer base = mr.base();
        int off = (int) (addr - mr.address());
        if (base == null) {
            return mr.segment().asSlice(addr - mr.address(), len).asByteBuffer();
        }
        int idx = mr.index();
        ByteBuffer[] v = views[slot];
        if (idx >= v.length) {
            int n = Math.max(idx + 1, v.length * 2);
            views[slot] = v = java.util.Arrays.copyOf(v, n);
            owners[slot] = java.util.Arrays.copyOf(owners[slot], n);
        }
        ByteBuffer b = v[idx];
        if (b == null || owners[slot][idx] != mr) {
            b = base.duplicate();
            v[idx] = b;
            owners[slot][idx] = mr;
        }
        b.clear();
        b.position(off);
        b.limit(off + len);
        return b;
    }
}
