package io.rdmablock.node.store;

import java.lang.foreign.MemorySegment;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link BlockQueue} on one io_uring of its own: one SQE per command, CQE user_data = slot index. The ring has at
 * least {@code capacity} SQEs and twice as many CQEs, so neither ring can overflow while at most {@code capacity}
 * commands are in flight.
 *
 * <p>READ/WRITE are IORING_OP_READ/WRITE, or READ_FIXED/WRITE_FIXED into buffers given to
 * {@link #registerBuffers} (FUA: {@code RWF_DSYNC}); FLUSH is IORING_OP_FSYNC with IORING_FSYNC_DATASYNC; WRITE
 * ZEROES and TRIM are IORING_OP_FALLOCATE. Volume descriptors enter the ring's sparse file table on their first use
 * on this queue (one register call per volume and queue), then go as fixed files (IOSQE_FIXED_FILE), which saves a
 * file-reference round trip per I/O; a volume deleted later keeps its slot until the queue closes.
 */
final class UringBlockQueue extends AbstractBlockQueue {

    private static final Logger LOG = LoggerFactory.getLogger(UringBlockQueue.class);
    /** File-table slots per ring: two per volume (direct, buffered) for the first 2048 volumes opened. */
    private static final int FILE_TABLE_SLOTS = 4096;

    private final IoUring ring;
    private final long[] cqeUserData;
    private final int[] cqeRes;
    private final boolean fixedFiles;
    /** Per file-table slot: 0 not yet registered, 1 registered, 2 registration failed (use the plain fd). */
    private final byte[] fileState;
    private long[] bufStart = new long[0];
    private long[] bufEnd = new long[0];

    UringBlockQueue(VolumeStore store, int capacity) {
        super(store, capacity);
        this.ring = IoUring.create(capacity);
        this.cqeUserData = new long[capacity];
        this.cqeRes = new int[capacity];
        int r = ring.registerSparseFiles(FILE_TABLE_SLOTS);
        this.fixedFiles = r == 0;
        this.fileState = new byte[fixedFiles ? FILE_TABLE_SLOTS : 0];
        if (!fixedFiles) {
            LOG.info("io_uring fixed files unavailable (IORING_REGISTER_FILES2: errno={}); using plain descriptors",
                    -r);
        }
    }

    @Override
    public IoBackend backend() {
        return IoBackend.IO_URING;
    }

    @Override
    public void registerBuffers(MemorySegment... regions) {
        super.registerBuffers(regions);
        // the kernel takes at most 1 GiB per iovec: split larger regions
        int n = 0;
        for (MemorySegment r : regions) {
            n += (int) ((r.byteSize() + (1L << 30) - 1) >>> 30);
        }
        long[] start = new long[n];
        long[] len = new long[n];
        int i = 0;
        for (MemorySegment r : regions) {
            for (long off = 0; off < r.byteSize(); off += 1L << 30) {
                start[i] = r.address() + off;
                len[i] = Math.min(1L << 30, r.byteSize() - off);
                i++;
            }
        }
        int res = ring.registerBuffers(start, len);
        if (res < 0) {
            LOG.info("io_uring buffer registration refused: errno={} ({}), regions={}; using unregistered buffers",
                    -res, Syscalls.errnoName(-res), n);
            return;
        }
        long[] end = new long[n];
        for (int k = 0; k < n; k++) {
            end[k] = start[k] + len[k];
        }
        bufStart = start;
        bufEnd = end;
        LOG.debug("io_uring buffers registered: regions={}", n);
    }

    @Override
    void queueRw(int slot, int kind, StoreVolume v, boolean direct, long address, long lengthBytes, long offsetBytes,
                 int rwFlags) {
        int fileSlot = 2 * v.fileSlot + (direct ? 0 : 1);
        int plainFd = direct ? v.directFd : v.bufferedFd;
        int fd = fixedIndex(fileSlot, plainFd);
        int sqeFlags = fd >= 0 ? IoUring.SQE_FIXED_FILE : 0;
        if (fd < 0) {
            fd = plainFd;
        }
        int buf = bufferIndex(address, lengthBytes);
        int op;
        if (buf >= 0) {
            op = kind == KIND_READ ? IoUring.OP_READ_FIXED : IoUring.OP_WRITE_FIXED;
        } else {
            op = kind == KIND_READ ? IoUring.OP_READ : IoUring.OP_WRITE;
            buf = 0;
        }
        ring.prep(op, sqeFlags, fd, offsetBytes, address, (int) lengthBytes, rwFlags, slot, buf);
    }

    @Override
    void queueFlush(int slot, StoreVolume v) {
        ring.prep(IoUring.OP_FSYNC, 0, v.directFd, 0, 0, 0, IoUring.FSYNC_DATASYNC, slot, 0);
    }

    @Override
    void queueFallocate(int slot, StoreVolume v, int mode, long offsetBytes, long lengthBytes) {
        // IORING_OP_FALLOCATE: off = offset, addr = length, len = mode
        ring.prep(IoUring.OP_FALLOCATE, 0, v.bufferedFd, offsetBytes, lengthBytes, mode, 0, slot, 0);
    }

    /** The fixed-file index for {@code fileSlot}, registering it on first use; -1 to use the plain descriptor. */
    private int fixedIndex(int fileSlot, int plainFd) {
        if (fileSlot >= fileState.length) {
            return -1;
        }
        byte st = fileState[fileSlot];
        if (st == 1) {
            return fileSlot;
        }
        if (st == 2) {
            return -1;
        }
        boolean ok = ring.updateFile(fileSlot, plainFd) == 0;
        fileState[fileSlot] = (byte) (ok ? 1 : 2);
        return ok ? fileSlot : -1;
    }

    /** Buffers registered with the kernel (for tests). */
    int registeredBufferCount() {
        return bufStart.length;
    }

    private int bufferIndex(long address, long lengthBytes) {
        long[] s = bufStart;
        for (int i = 0; i < s.length; i++) {
            if (address >= s[i] && address + lengthBytes <= bufEnd[i]) {
                return i;
            }
        }
        return -1;
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
