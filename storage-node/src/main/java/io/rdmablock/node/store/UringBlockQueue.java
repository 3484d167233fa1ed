package io.rdmablock.node.store;

/**
 * {@link BlockQueue} on one io_uring of its own: one SQE per command, CQE user_data = slot index. The ring has at
 * least {@code capacity} SQEs and twice as many CQEs, so neither ring can overflow while at most {@code capacity}
 * commands are in flight.
 *
 * <p>READ/WRITE are IORING_OP_READ/WRITE (FUA: {@code RWF_DSYNC}); FLUSH is IORING_OP_FSYNC with
 * IORING_FSYNC_DATASYNC; WRITE ZEROES and TRIM are IORING_OP_FALLOCATE.
 */
final class UringBlockQueue extends AbstractBlockQueue {

    private final IoUring ring;
    private final long[] cqeUserData;
    private final int[] cqeRes;

    UringBlockQueue(VolumeStore store, int capacity) {
        super(store, capacity);
        this.ring = IoUring.create(capacity);
        this.cqeUserData = new long[capacity];
        this.cqeRes = new int[capacity];
    }

    @Override
    public IoBackend backend() {
        return IoBackend.IO_URING;
    }

    @Override
    void queueRw(int slot, int kind, int fd, long address, long lengthBytes, long offsetBytes, int rwFlags) {
        ring.prep(kind == KIND_READ ? IoUring.OP_READ : IoUring.OP_WRITE, fd, offsetBytes, address, (int) lengthBytes,
                rwFlags, slot);
    }

    @Override
    void queueFlush(int slot, int fd) {
        ring.prep(IoUring.OP_FSYNC, fd, 0, 0, 0, IoUring.FSYNC_DATASYNC, slot);
    }

    @Override
    void queueFallocate(int slot, int fd, int mode, long offsetBytes, long lengthBytes) {
        // IORING_OP_FALLOCATE: off = offset, addr = length, len = mode
        ring.prep(IoUring.OP_FALLOCATE, fd, offsetBytes, lengthBytes, mode, 0, slot);
    }

    @Override
    public int submit() {
        if (closed) {
            return 0;
        }
        return ring.enter(0);
    }

    @Override
    int reapBackend(long[] userData, int[] result, int at, int max) {
        int n = ring.reap(cqeUserData, cqeRes, 0, Math.min(max, capacity));
        for (int i = 0; i < n; i++) {
            int slot = (int) cqeUserData[i];
            result[at + i] = resultOf(slot, cqeRes[i]);
            userData[at + i] = complete(slot);
        }
        return n;
    }

    @Override
    boolean backendReady() {
        return ring.cqReady();
    }

    @Override
    void backendWait(long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        while (!ring.cqReady()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            ring.enter(left);
        }
    }

    @Override
    void closeBackend() {
        ring.close();
    }
}
