package io.rdmablock.node.store;

import java.lang.foreign.MemorySegment;

/**
 * The {@link IoBackend#NULL} queue, <b>benchmark only: it breaks durability by design</b>. A write completes at once
 * without storing anything, a read fills its buffer with zeros (never stale bytes of an earlier command), FLUSH,
 * WRITE ZEROES and TRIM complete at once; every result is {@code 0}. It exists so that the cost of rdmablock's own
 * stack per I/O can be measured apart from the disk ({@code rdmablock bench --stack-only}).
 *
 * <p>Same contract as every {@link BlockQueue} otherwise: owner thread only, no allocation and no lock per I/O,
 * at most {@link #capacity()} commands between submit and reap (else {@link IllegalStateException}), ranges checked
 * against the volume (else {@link IllegalArgumentException} naming the bounds), a deleted volume completes
 * {@code -ENXIO}. Completions come back in submission order from a preallocated ring.
 */
final class NullBlockQueue implements BlockQueue {
    private static final int ENXIO = 6;
    private final int capacity;
    private final long[] userData;
    private final int[] result;
    private long head;
    private long tail;
    private boolean closed;

    NullBlockQueue(int capacity) {
        this.capacity = capacity;
        this.userData = new long[capacity];
        this.result = new int[capacity];
    }

    private void complete(StoreVolume v, long tag) {
        if (closed) {
            throw new IllegalStateException("queue is closed");
        }
        if (tail - head >= capacity) {
            throw new IllegalStateException("queue full: inFlight=" + (tail - head) + ", capacity=" + capacity);
        }
        int i = (int) (tail % capacity);
        userData[i] = tag;
        result[i] = v.isDeleted() ? -ENXIO : 0;
        tail++;
    }

    private static void checkRange(String op, StoreVolume v, long offsetBytes, long lengthBytes) {
        int lba = v.lbaSizeBytes();
        if (offsetBytes < 0 || lengthBytes < 0 || offsetBytes % lba != 0 || lengthBytes % lba != 0
                || offsetBytes > v.sizeBytes() - lengthBytes) {
            throw new IllegalArgumentException("invalid " + op + " range: offsetBytes=" + offsetBytes
                    + ", lengthBytes=" + lengthBytes + ", lbaSizeBytes=" + lba + ", sizeBytes=" + v.sizeBytes());
        }
        if (lengthBytes > MAX_TRANSFER_BYTES && (op.equals("read") || op.equals("write"))) {
            throw new IllegalArgumentException("invalid " + op + " length: lengthBytes=" + lengthBytes + ", max="
                    + MAX_TRANSFER_BYTES);
        }
    }

    @Override
    public void submitRead(StoreVolume volume, long offsetBytes, MemorySegment buf, long tag) {
        checkRange("read", volume, offsetBytes, buf.byteSize());
        buf.fill((byte) 0);
        complete(volume, tag);
    }

    @Override
    public void submitWrite(StoreVolume volume, long offsetBytes, MemorySegment buf, boolean fua, long tag) {
        checkRange("write", volume, offsetBytes, buf.byteSize());
        complete(volume, tag);
    }

    @Override
    public void submitFlush(StoreVolume volume, long tag) {
        complete(volume, tag);
    }

    @Override
    public void submitWriteZeroes(StoreVolume volume, long offsetBytes, long lengthBytes, long tag) {
        checkRange("write zeroes", volume, offsetBytes, lengthBytes);
        complete(volume, tag);
    }

    @Override
    public void submitTrim(StoreVolume volume, long offsetBytes, long lengthBytes, long tag) {
        checkRange("trim", volume, offsetBytes, lengthBytes);
        complete(volume, tag);
    }

    @Override
    public void registerBuffers(MemorySegment... regions) {
        for (MemorySegment r : regions) {
            if (!r.isNative()) {
                throw new IllegalArgumentException("invalid region: not a native segment: " + r);
            }
        }
    }

    @Override
    public int submit() {
        return 0;
    }

    @Override
    public int reap(long[] tags, int[] results, int max) {
        int n = (int) Math.min(tail - head, Math.min(max, Math.min(tags.length, results.length)));
        for (int k = 0; k < n; k++) {
            int i = (int) (head % capacity);
            tags[k] = userData[i];
            results[k] = result[i];
            head++;
        }
        return n;
    }

    @Override
    public boolean awaitCompletion(long timeoutNs) {
        return tail > head; // completions exist from the submit on; nothing ever arrives later
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public int inFlight() {
        return (int) (tail - head);
    }

    @Override
    public IoBackend backend() {
        return IoBackend.NULL;
    }

    @Override
    public void close() {
        closed = true;
    }
}
