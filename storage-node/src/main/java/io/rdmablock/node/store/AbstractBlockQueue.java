package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What both backends share: argument checks, slot bookkeeping (one slot per command in flight, preallocated, a
 * free-slot stack), the choice of descriptor (O_DIRECT when offset, length and address are aligned, else buffered),
 * and completions produced without the kernel (zero length, deleted volume, unsupported deallocate).
 *
 * <p>Not thread-safe: the owning poller thread only.
 */
abstract class AbstractBlockQueue implements BlockQueue {

    static final int KIND_READ = 1;
    static final int KIND_WRITE = 2;
    static final int KIND_FLUSH = 3;
    static final int KIND_FALLOCATE = 4;

    private static final long ZERO_BUF_BYTES = 1 << 20;
    private static final MemorySegment ZEROES = Arena.global().allocate(ZERO_BUF_BYTES, 4096);

    final VolumeStore store;
    final int capacity;
    /** Caller's userData per slot. */
    final long[] slotUserData;
    /** Bytes a READ/WRITE slot must transfer; -1 for other commands. */
    final long[] slotExpectBytes;
    /** Per slot: aligned bounce buffer for misaligned caller memory (allocated on first need, then reused). */
    private final MemorySegment[] slotBounce;
    /** Per slot: the caller's read buffer to copy the bounce buffer into at completion, or null. */
    private final MemorySegment[] slotCopyBack;
    private final int[] freeSlots;
    private int freeTop;
    private final long[] immUserData;
    private final int[] immResult;
    private int immHead;
    private int immCount;
    private int inFlight;
    boolean closed;
    private boolean buffersRegistered;

    AbstractBlockQueue(VolumeStore store, int capacity) {
        this.store = store;
        this.capacity = capacity;
        this.slotUserData = new long[capacity];
        this.slotExpectBytes = new long[capacity];
        this.slotBounce = new MemorySegment[capacity];
        this.slotCopyBack = new MemorySegment[capacity];
        this.freeSlots = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            freeSlots[i] = capacity - 1 - i;
        }
        this.freeTop = capacity;
        this.immUserData = new long[capacity];
        this.immResult = new int[capacity];
    }

    // ---- backend hooks: queue one command for slot; it reaches the kernel/workers at submit() ----

    /** READ or WRITE; {@code direct} selects the O_DIRECT descriptor, else the buffered one. */
    abstract void queueRw(int slot, int kind, StoreVolume v, boolean direct, long address, long lengthBytes,
                          long offsetBytes, int rwFlags);

    /** fdatasync of the volume's file. */
    abstract void queueFlush(int slot, StoreVolume v);

    /** fallocate on the volume's buffered descriptor. */
    abstract void queueFallocate(int slot, StoreVolume v, int mode, long offsetBytes, long lengthBytes);

    /** Copies up to {@code max} backend completions from index {@code at}; frees their slots via {@link #complete}. */
    abstract int reapBackend(long[] userData, int[] result, int at, int max);

    /** True when the backend has at least one completion ready. */
    abstract boolean backendReady();

    /** Waits for a backend completion up to {@code timeoutNs}. */
    abstract void backendWait(long timeoutNs);

    abstract void closeBackend();

    // ---- BlockQueue ----

    @Override
    public final void submitRead(StoreVolume volume, long offsetBytes, MemorySegment buf, long userData) {
        long len = checkBuffer("read", volume, offsetBytes, buf);
        if (shortcut(volume, len, userData)) {
            return;
        }
        int slot = takeSlot(userData, len);
        long addr = buf.address();
        boolean offsetAligned = ((offsetBytes | len) & volume.dioOffsetMask) == 0;
        if (offsetAligned && (addr & volume.dioMemMask) != 0) {
            // misaligned memory, aligned range: O_DIRECT into a bounce buffer, copied out at completion
            MemorySegment bounce = bounce(slot, len);
            slotCopyBack[slot] = buf;
            addr = bounce.address();
        }
        queueRw(slot, KIND_READ, volume, offsetAligned, addr, len, offsetBytes, 0);
    }

    @Override
    public final void submitWrite(StoreVolume volume, long offsetBytes, MemorySegment buf, boolean fua, long userData) {
        long len = checkBuffer("write", volume, offsetBytes, buf);
        if (shortcut(volume, len, userData)) {
            return;
        }
        volume.noteWritten(offsetBytes, len);
        int slot = takeSlot(userData, len);
        long addr = buf.address();
        boolean offsetAligned = ((offsetBytes | len) & volume.dioOffsetMask) == 0;
        if (offsetAligned && (addr & volume.dioMemMask) != 0) {
            // misaligned memory, aligned range: copy into a bounce buffer and write it with O_DIRECT (a page-cache
            // write here could race with O_DIRECT writes to other blocks of the same page)
            MemorySegment bounce = bounce(slot, len);
            MemorySegment.copy(buf, 0, bounce, 0, len);
            addr = bounce.address();
        }
        queueRw(slot, KIND_WRITE, volume, offsetAligned, addr, len, offsetBytes, fua ? Syscalls.RWF_DSYNC : 0);
    }

    @Override
    public final void submitFlush(StoreVolume volume, long userData) {
        checkVolume(volume);
        if (shortcut(volume, 1, userData)) {
            return;
        }
        queueFlush(takeSlot(userData, -1), volume);
    }

    @Override
    public final void submitWriteZeroes(StoreVolume volume, long offsetBytes, long lengthBytes, long userData) {
        checkRange("writeZeroes", volume, offsetBytes, lengthBytes);
        if (shortcut(volume, lengthBytes, userData)) {
            return;
        }
        if (store.zeroRangeSupported()) {
            queueFallocate(takeSlot(userData, -1), volume,
                    Syscalls.FALLOC_FL_ZERO_RANGE | Syscalls.FALLOC_FL_KEEP_SIZE, offsetBytes, lengthBytes);
        } else if (store.zeroesAfterTrim() && !store.options().preallocate()) {
            queueFallocate(takeSlot(userData, -1), volume,
                    Syscalls.FALLOC_FL_PUNCH_HOLE | Syscalls.FALLOC_FL_KEEP_SIZE, offsetBytes, lengthBytes);
        } else {
            // No fallocate on this filesystem: write zeroes synchronously on the caller's thread (rare; correct).
            completeNow(userData, writeZeroesSync(volume.bufferedFd, offsetBytes, lengthBytes));
        }
    }

    @Override
    public final void submitTrim(StoreVolume volume, long offsetBytes, long lengthBytes, long userData) {
        checkRange("trim", volume, offsetBytes, lengthBytes);
        if (shortcut(volume, lengthBytes, userData)) {
            return;
        }
        if (store.zeroesAfterTrim()) {
            // thick (preallocated) volumes keep their blocks: zero the range instead of handing it back
            int mode = store.options().preallocate() ? Syscalls.FALLOC_FL_ZERO_RANGE : Syscalls.FALLOC_FL_PUNCH_HOLE;
            queueFallocate(takeSlot(userData, -1), volume, mode | Syscalls.FALLOC_FL_KEEP_SIZE, offsetBytes,
                    lengthBytes);
        } else {
            completeNow(userData, 0); // deallocate is advisory; zeroesAfterTrim() is false
        }
    }

    @Override
    public void registerBuffers(MemorySegment... regions) {
        if (inFlight != 0) {
            throw new IllegalStateException("registerBuffers with commands in flight: inFlight=" + inFlight);
        }
        if (buffersRegistered) {
            throw new IllegalStateException("buffers already registered on this queue");
        }
        buffersRegistered = true;
        for (MemorySegment r : regions) {
            if (r == null || !r.isNative()) {
                throw new IllegalArgumentException("invalid region: registerBuffers needs native segments, region="
                        + r);
            }
        }
    }

    @Override
    public final int reap(long[] userData, int[] result, int max) {
        int limit = Math.min(max, Math.min(userData.length, result.length));
        int n = 0;
        while (immCount > 0 && n < limit) {
            userData[n] = immUserData[immHead];
            result[n] = immResult[immHead];
            immHead = immHead + 1 == capacity ? 0 : immHead + 1;
            immCount--;
            inFlight--;
            n++;
        }
        submit();
        if (n < limit) {
            n += reapBackend(userData, result, n, limit - n);
        }
        return n;
    }

    @Override
    public final boolean awaitCompletion(long timeoutNs) {
        submit();
        if (immCount > 0 || backendReady()) {
            return true;
        }
        if (inFlight == 0 || timeoutNs <= 0) {
            return false;
        }
        backendWait(timeoutNs);
        return backendReady();
    }

    @Override
    public final int capacity() {
        return capacity;
    }

    @Override
    public final int inFlight() {
        return inFlight;
    }

    @Override
    public final void close() {
        if (closed) {
            return;
        }
        long deadline = System.nanoTime() + 30_000_000_000L;
        long[] ud = new long[capacity];
        int[] res = new int[capacity];
        while (inFlight > 0 && System.nanoTime() < deadline) {
            awaitCompletion(100_000_000L);
            reap(ud, res, capacity);
        }
        closed = true;
        closeBackend();
    }

    // ---- for backends ----

    /** Frees {@code slot} after its completion has been reported; returns the caller's userData. */
    final long complete(int slot) {
        long ud = slotUserData[slot];
        MemorySegment copyBack = slotCopyBack[slot];
        if (copyBack != null) {
            MemorySegment.copy(slotBounce[slot], 0, copyBack, 0, copyBack.byteSize());
            slotCopyBack[slot] = null;
        }
        freeSlots[freeTop++] = slot;
        inFlight--;
        return ud;
    }

    /** Turns a kernel result (bytes or -errno) into 0 / -errno for {@code slot}. */
    final int resultOf(int slot, long res) {
        if (res < 0) {
            return (int) res;
        }
        long expect = slotExpectBytes[slot];
        return expect < 0 || res == expect ? 0 : -Syscalls.EIO;
    }

    // ---- internals ----

    private int takeSlot(long userData, long expectBytes) {
        // capacity was checked by ensureCapacity() before any state change
        int slot = freeSlots[--freeTop];
        slotUserData[slot] = userData;
        slotExpectBytes[slot] = expectBytes;
        inFlight++;
        return slot;
    }

    private void ensureCapacity() {
        if (closed) {
            throw new IllegalStateException("block queue closed");
        }
        if (inFlight >= capacity) {
            throw new IllegalStateException("block queue full: inFlight=" + inFlight + ", capacity=" + capacity);
        }
    }

    /** Completes without I/O when there is nothing to do or the volume is gone; true if it did. */
    private boolean shortcut(StoreVolume volume, long lengthBytes, long userData) {
        ensureCapacity();
        if (volume.isDeleted()) {
            completeNow(userData, -Syscalls.ENXIO);
            return true;
        }
        if (lengthBytes == 0) {
            completeNow(userData, 0);
            return true;
        }
        return false;
    }

    private void completeNow(long userData, int result) {
        int tail = immHead + immCount;
        if (tail >= capacity) {
            tail -= capacity;
        }
        immUserData[tail] = userData;
        immResult[tail] = result;
        immCount++;
        inFlight++;
    }

    /** Slot's bounce buffer of at least {@code lengthBytes} (page-aligned; grown to a power of two, kept). */
    private MemorySegment bounce(int slot, long lengthBytes) {
        MemorySegment b = slotBounce[slot];
        if (b == null || b.byteSize() < lengthBytes) {
            long size = Math.max(4096, Long.highestOneBit(lengthBytes - 1) << 1);
            b = Arena.ofAuto().allocate(size, 4096);
            slotBounce[slot] = b;
        }
        return b;
    }

    private void checkVolume(StoreVolume v) {
        if (v == null || v.store() != store) {
            throw new IllegalArgumentException("invalid volume: volume=" + v + " (not of this store)");
        }
    }

    private long checkBuffer(String op, StoreVolume v, long offsetBytes, MemorySegment buf) {
        if (buf == null || !buf.isNative()) {
            throw new IllegalArgumentException("invalid buf: " + op + " needs a native segment, buf=" + buf);
        }
        long len = buf.byteSize();
        if (len > MAX_TRANSFER_BYTES) {
            throw new IllegalArgumentException("invalid lengthBytes: op=" + op + ", lengthBytes=" + len
                    + ", max=" + MAX_TRANSFER_BYTES);
        }
        checkRange(op, v, offsetBytes, len);
        return len;
    }

    private void checkRange(String op, StoreVolume v, long offsetBytes, long lengthBytes) {
        checkVolume(v);
        long size = v.rawSizeBytes();
        int lba = v.lbaSizeBytes();
        if (offsetBytes < 0 || lengthBytes < 0 || offsetBytes % lba != 0 || lengthBytes % lba != 0
                || lengthBytes > size || offsetBytes > size - lengthBytes) {
            throw new IllegalArgumentException("invalid range: op=" + op + ", offsetBytes=" + offsetBytes
                    + ", lengthBytes=" + lengthBytes + ", sizeBytes=" + size + ", lbaSizeBytes=" + lba
                    + " (offset and length must be LBA multiples within the volume)");
        }
    }

    static int writeZeroesSync(int fd, long offsetBytes, long lengthBytes) {
        MemorySegment err = Syscalls.threadErrState();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment iov = a.allocate(16, 8);
            long done = 0;
            while (done < lengthBytes) {
                long n = Math.min(ZERO_BUF_BYTES, lengthBytes - done);
                iov.set(java.lang.foreign.ValueLayout.JAVA_LONG, 0, ZEROES.address());
                iov.set(java.lang.foreign.ValueLayout.JAVA_LONG, 8, n);
                long r = Syscalls.pwritev2(err, fd, iov.address(), offsetBytes + done, 0);
                if (r < 0) {
                    int e = Syscalls.errno(err);
                    if (e == Syscalls.EINTR) {
                        continue;
                    }
                    return -e;
                }
                done += r;
            }
            return 0;
        }
    }
}
