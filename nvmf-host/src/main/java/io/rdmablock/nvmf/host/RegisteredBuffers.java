package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Data buffers of a host (the initiator's {@code BlockDevice.allocateBuffer}): page-aligned (4096 B) native memory,
 * each in its own shared arena and registered once with the owner's protection domain
 * (LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE) so the target can RDMA READ/WRITE it directly (zero copy). The data
 * path finds the keys of a segment with {@link #find}, a binary search over an immutable snapshot: no lock and no
 * allocation per I/O, safe from any thread. Registration and release are synchronized (rare). Memory owned elsewhere
 * (a multipath device's buffers, registered on each path's protection domain) is {@link #adopt}ed: registered here,
 * deregistered by {@link #free} and {@link #close}, never freed here.
 */
public final class RegisteredBuffers implements AutoCloseable {
    /** Alignment of every registered allocation. */
    public static final long PAGE_BYTES = 4096;

    /** Immutable, sorted by start address. */
    private record Snapshot(long[] starts, long[] ends, MemoryRegion[] regions, Arena[] arenas) {
    }

    private final ProtectionDomain pd;
    private final long maxBufferBytes;
    private volatile Snapshot snapshot = new Snapshot(new long[0], new long[0], new MemoryRegion[0], new Arena[0]);
    private boolean closed;

    /** @param maxBufferBytes largest buffer {@link #allocate} hands out */
    public RegisteredBuffers(ProtectionDomain pd, long maxBufferBytes) {
        this.pd = pd;
        this.maxBufferBytes = maxBufferBytes;
    }

    /**
     * Allocates and registers a buffer of {@code lengthBytes}.
     *
     * @throws IllegalArgumentException when lengthBytes is outside 1 .. maxBufferBytes
     * @throws IllegalStateException    after {@link #close()}
     * @throws io.rdmablock.rdma.verbs.VerbsException when the registration fails
     */
    public synchronized MemorySegment allocate(long lengthBytes) {
        if (lengthBytes < 1 || lengthBytes > maxBufferBytes) {
            throw new IllegalArgumentException("invalid lengthBytes: lengthBytes=" + lengthBytes + ", min=1, max="
                    + maxBufferBytes);
        }
        if (closed) {
            throw new IllegalStateException("device is closed");
        }
        Arena arena = Arena.ofShared();
        MemoryRegion mr;
        try {
            MemorySegment seg = arena.allocate(lengthBytes, PAGE_BYTES);
            mr = pd.registerMemory(seg, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        insert(insertionPoint(snapshot.starts, mr.address()), mr, lengthBytes, arena);
        return mr.segment();
    }

    /** Publishes a snapshot with {@code mr} at index {@code at}; arena null for adopted memory. */
    private void insert(int at, MemoryRegion mr, long lengthBytes, Arena arena) {
        Snapshot s = snapshot;
        int n = s.starts.length;
        long[] starts = new long[n + 1];
        long[] ends = new long[n + 1];
        MemoryRegion[] regions = new MemoryRegion[n + 1];
        Arena[] arenas = new Arena[n + 1];
        copyInsert(s.starts, starts, at, mr.address());
        copyInsert(s.ends, ends, at, mr.address() + lengthBytes);
        copyInsert(s.regions, regions, at, mr);
        copyInsert(s.arenas, arenas, at, arena);
        snapshot = new Snapshot(starts, ends, regions, arenas);
    }

    /**
     * Registers memory this pool does not own (LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE) so that {@link #find} gives
     * its keys; {@link #free} and {@link #close} deregister it and leave the memory to its owner. The owner frees it
     * only after deregistering it from every pool that adopted it.
     *
     * @throws IllegalArgumentException when the segment is empty, larger than maxBufferBytes, or overlaps a buffer
     *                                  of this pool
     * @throws IllegalStateException    after {@link #close()}
     * @throws io.rdmablock.rdma.verbs.VerbsException when the registration fails
     */
    public synchronized void adopt(MemorySegment buffer) {
        long len = buffer.byteSize();
        if (len < 1 || len > maxBufferBytes) {
            throw new IllegalArgumentException("invalid buffer length: lengthBytes=" + len + ", min=1, max="
                    + maxBufferBytes);
        }
        if (closed) {
            throw new IllegalStateException("device is closed");
        }
        Snapshot s = snapshot;
        int at = insertionPoint(s.starts, buffer.address());
        if ((at > 0 && s.ends[at - 1] > buffer.address())
                || (at < s.starts.length && s.starts[at] < buffer.address() + len)) {
            throw new IllegalArgumentException("buffer overlaps a registered one: address=0x"
                    + Long.toHexString(buffer.address()) + ", lengthBytes=" + len);
        }
        MemoryRegion mr = pd.registerMemory(buffer, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
        insert(at, mr, len, null);
    }

    /**
     * Deregisters a buffer from {@link #allocate} (and frees it) or from {@link #adopt} (its memory stays its
     * owner's).
     *
     * @throws IllegalArgumentException when {@code buffer} does not start a buffer of this pool
     */
    public synchronized void free(MemorySegment buffer) {
        Snapshot s = snapshot;
        int i = Arrays.binarySearch(s.starts, buffer.address());
        if (i < 0) {
            throw new IllegalArgumentException("not a buffer of this device: address=0x"
                    + Long.toHexString(buffer.address()));
        }
        MemoryRegion mr = s.regions[i];
        Arena arena = s.arenas[i];
        snapshot = new Snapshot(remove(s.starts, i), remove(s.ends, i), remove(s.regions, i, new MemoryRegion[0]),
                remove(s.arenas, i, new Arena[0]));
        mr.close();
        if (arena != null) {
            arena.close();
        }
    }

    /**
     * The region that wholly contains {@code [address, address + lengthBytes)}, or null when the range is not
     * (entirely) inside one buffer from {@link #allocate}.
     */
    public MemoryRegion find(long address, long lengthBytes) {
        Snapshot s = snapshot;
        long[] starts = s.starts;
        int lo = 0;
        int hi = starts.length - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (starts[mid] <= address) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        if (found < 0 || address + lengthBytes > s.ends[found]) {
            return null;
        }
        return s.regions[found];
    }

    /** Deregisters and frees every buffer still allocated; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Snapshot s = snapshot;
        snapshot = new Snapshot(new long[0], new long[0], new MemoryRegion[0], new Arena[0]);
        for (int i = 0; i < s.regions.length; i++) {
            s.regions[i].close();
            if (s.arenas[i] != null) {
                s.arenas[i].close();
            }
        }
    }

    private static int insertionPoint(long[] a, long key) {
        int i = Arrays.binarySearch(a, key);
        return i >= 0 ? i : -i - 1;
    }

    private static void copyInsert(long[] src, long[] dst, int at, long v) {
        System.arraycopy(src, 0, dst, 0, at);
        dst[at] = v;
        System.arraycopy(src, at, dst, at + 1, src.length - at);
    }

    private static <T> void copyInsert(T[] src, T[] dst, int at, T v) {
        System.arraycopy(src, 0, dst, 0, at);
        dst[at] = v;
        System.arraycopy(src, at, dst, at + 1, src.length - at);
    }

    private static long[] remove(long[] a, int i) {
        long[] r = new long[a.length - 1];
        System.arraycopy(a, 0, r, 0, i);
        System.arraycopy(a, i + 1, r, i, a.length - i - 1);
        return r;
    }

    private static <T> T[] remove(T[] a, int i, T[] type) {
        T[] r = Arrays.copyOf(type, a.length - 1);
        System.arraycopy(a, 0, r, 0, i);
        System.arraycopy(a, i + 1, r, i, a.length - i - 1);
        return r;
    }
}
