package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A minimal io_uring: {@code io_uring_setup(2)}, {@code io_uring_enter(2)}, {@code io_uring_register(2)} through
 * libc {@code syscall}, the SQ/CQ rings and the SQE array mmapped, SQEs written in place. Not thread-safe: one
 * owner thread (no SQPOLL, no shared rings).
 *
 * <p>Layouts (include/uapi/linux/io_uring.h): {@code struct io_uring_params} 120 bytes with {@code sq_off} at 40 and
 * {@code cq_off} at 80; {@code struct io_uring_sqe} 64 bytes:
 * <pre>
 *  0 u8 opcode | 1 u8 flags | 2 u16 ioprio | 4 s32 fd
 *  8 u64 off
 * 16 u64 addr
 * 24 u32 len  | 28 u32 rw_flags / fsync_flags
 * 32 u64 user_data
 * 40 u16 buf_index | 42 u16 personality | 44 s32 splice_fd_in
 * 48 u64 addr3 | 56 u64 pad
 * </pre>
 * {@code struct io_uring_cqe} 16 bytes: u64 user_data, s32 res, u32 flags. Ring indices: the application writes the
 * SQ tail with release semantics after filling the SQE and reads the CQ tail with acquire semantics before reading
 * CQEs; it publishes the CQ head with release semantics (io_uring(7), "Submission queue polling" and "Memory
 * ordering").
 */
final class IoUring implements AutoCloseable {

    // struct layouts (checked against <linux/io_uring.h> by IoUringLayoutTest)
    static final int PARAMS_BYTES = 120;
    static final int PARAMS_FEATURES = 20;
    static final int PARAMS_SQ_OFF = 40;
    static final int PARAMS_CQ_OFF = 80;
    static final int SQOFF_HEAD = 0;
    static final int SQOFF_TAIL = 4;
    static final int SQOFF_RING_MASK = 8;
    static final int SQOFF_ARRAY = 24;
    static final int CQOFF_HEAD = 0;
    static final int CQOFF_TAIL = 4;
    static final int CQOFF_RING_MASK = 8;
    static final int CQOFF_CQES = 20;
    static final int SQE_BYTES = 64;
    static final int SQE_FLAGS = 1;
    static final int SQE_FD = 4;
    static final int SQE_OFF = 8;
    static final int SQE_ADDR = 16;
    static final int SQE_LEN = 24;
    static final int SQE_RW_FLAGS = 28;
    static final int SQE_USER_DATA = 32;
    static final int SQE_BUF_INDEX = 40;
    static final int CQE_BYTES = 16;
    static final int CQE_RES = 8;
    static final int GETEVENTS_ARG_BYTES = 24;
    static final int GETEVENTS_ARG_TS = 16;
    static final int RSRC_REGISTER_BYTES = 32;
    static final int FILES_UPDATE_FDS = 8;
    static final int PROBE_OPS = 16;
    static final int PROBE_OP_BYTES = 8;
    static final int PROBE_OP_FLAGS = 2;

    static final int SYS_IO_URING_SETUP = 425;
    static final int SYS_IO_URING_ENTER = 426;
    static final int SYS_IO_URING_REGISTER = 427;

    static final int OP_FSYNC = 3;
    static final int OP_READ_FIXED = 4;
    static final int OP_WRITE_FIXED = 5;
    static final int SQE_FIXED_FILE = 1;
    static final int OP_FALLOCATE = 17;
    static final int OP_READ = 22;
    static final int OP_WRITE = 23;
    static final int FSYNC_DATASYNC = 1;

    static final int ENTER_GETEVENTS = 1;
    static final int ENTER_EXT_ARG = 1 << 3;
    static final int FEAT_SINGLE_MMAP = 1;
    static final int FEAT_EXT_ARG = 1 << 8;
    static final int REGISTER_BUFFERS = 0;
    static final int REGISTER_FILES_UPDATE = 6;
    static final int REGISTER_PROBE = 8;
    static final int REGISTER_FILES2 = 13;
    static final int RSRC_REGISTER_SPARSE = 1;
    private static final long OFF_SQ_RING = 0L;
    private static final long OFF_CQ_RING = 0x8000000L;
    private static final long OFF_SQES = 0x10000000L;
    private static final int PROT_RW = 3;
    private static final int MAP_SHARED_POPULATE = 0x1 | 0x8000;
    private static final int ETIME = 62;

    private static final VarHandle INT = JAVA_INT.varHandle();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment err = Syscalls.newErrState(arena);
    /** struct io_uring_getevents_arg (24 bytes) followed by struct __kernel_timespec (16 bytes). */
    private final MemorySegment waitArg = arena.allocate(40, 8);
    private final int ringFd;
    private final int sqEntries;
    private final boolean extArg;
    private final long sqRingAddr;
    private final long sqRingBytes;
    private final long cqRingAddr;
    private final long cqRingBytes;
    private final long sqesAddr;
    private final MemorySegment sq;
    private final MemorySegment cq;
    private final MemorySegment sqes;
    private final long sqHeadOff;
    private final long sqTailOff;
    private final int sqMask;
    private final long cqHeadOff;
    private final long cqTailOff;
    private final int cqMask;
    private final long cqesOff;
    private int sqTail;
    private int cqHead;
    private boolean closed;

    private IoUring(int entries) {
        MemorySegment p = arena.allocate(PARAMS_BYTES, 8);
        long fd = Syscalls.syscall(err, SYS_IO_URING_SETUP, entries, p.address(), 0, 0, 0, 0);
        if (fd < 0) {
            int e = Syscalls.errno(err);
            arena.close();
            throw new StoreException("io_uring_setup failed: errno=" + e + " (" + Syscalls.errnoName(e) + "), entries="
                    + entries, e);
        }
        ringFd = (int) fd;
        sqEntries = p.get(JAVA_INT, 0);
        int cqEntries = p.get(JAVA_INT, 4);
        int features = p.get(JAVA_INT, PARAMS_FEATURES);
        extArg = (features & FEAT_EXT_ARG) != 0;
        long sqOff = PARAMS_SQ_OFF;
        long cqOff = PARAMS_CQ_OFF;
        sqHeadOff = p.get(JAVA_INT, sqOff + SQOFF_HEAD);
        sqTailOff = p.get(JAVA_INT, sqOff + SQOFF_TAIL);
        long sqArrayOff = p.get(JAVA_INT, sqOff + SQOFF_ARRAY);
        cqHeadOff = p.get(JAVA_INT, cqOff + CQOFF_HEAD);
        cqTailOff = p.get(JAVA_INT, cqOff + CQOFF_TAIL);
        cqesOff = p.get(JAVA_INT, cqOff + CQOFF_CQES);
        long sqBytes = sqArrayOff + 4L * sqEntries;
        long cqBytes = cqesOff + (long) CQE_BYTES * cqEntries;
        try {
            if ((features & FEAT_SINGLE_MMAP) != 0) {
                sqRingBytes = Math.max(sqBytes, cqBytes);
                sqRingAddr = Syscalls.mmap(sqRingBytes, PROT_RW, MAP_SHARED_POPULATE, ringFd, OFF_SQ_RING, "sq ring");
                cqRingAddr = sqRingAddr;
                cqRingBytes = 0;
            } else {
                sqRingBytes = sqBytes;
                sqRingAddr = Syscalls.mmap(sqBytes, PROT_RW, MAP_SHARED_POPULATE, ringFd, OFF_SQ_RING, "sq ring");
                cqRingBytes = cqBytes;
                cqRingAddr = Syscalls.mmap(cqBytes, PROT_RW, MAP_SHARED_POPULATE, ringFd, OFF_CQ_RING, "cq ring");
            }
            sqesAddr = Syscalls.mmap((long) SQE_BYTES * sqEntries, PROT_RW, MAP_SHARED_POPULATE, ringFd, OFF_SQES, "sqes");
        } catch (RuntimeException e) {
            Syscalls.close(ringFd);
            arena.close();
            throw e;
        }
        sq = MemorySegment.ofAddress(sqRingAddr).reinterpret(Math.max(sqBytes, cqRingBytes == 0 ? cqBytes : 0));
        cq = cqRingBytes == 0 ? sq : MemorySegment.ofAddress(cqRingAddr).reinterpret(cqBytes);
        sqes = MemorySegment.ofAddress(sqesAddr).reinterpret((long) SQE_BYTES * sqEntries);
        sqMask = sq.get(JAVA_INT, p.get(JAVA_INT, sqOff + SQOFF_RING_MASK));
        cqMask = cq.get(JAVA_INT, p.get(JAVA_INT, cqOff + CQOFF_RING_MASK));
        for (int i = 0; i < sqEntries; i++) {
            sq.set(JAVA_INT, sqArrayOff + 4L * i, i); // identity: SQE i is ring slot i
        }
        sqTail = (int) INT.getAcquire(sq, sqTailOff);
        cqHead = (int) INT.getAcquire(cq, cqHeadOff);
    }

    /** Sets up a ring of at least {@code entries} SQEs (CQ twice that); throws {@link StoreException} on failure. */
    static IoUring create(int entries) {
        return new IoUring(entries);
    }

    /**
     * Checks that io_uring works here and supports READ, WRITE, FSYNC and FALLOCATE (IORING_REGISTER_PROBE).
     *
     * @return null when usable, else the reason
     */
    static String probe() {
        IoUring r;
        try {
            r = create(4);
        } catch (StoreException e) {
            return e.getMessage();
        } catch (RuntimeException | LinkageError e) {
            return "io_uring binding failed: " + e;
        }
        try (r; Arena a = Arena.ofConfined()) {
            MemorySegment pr = a.allocate(PROBE_OPS + 256 * PROBE_OP_BYTES, 8);
            long res = Syscalls.syscall(r.err, SYS_IO_URING_REGISTER, r.ringFd, REGISTER_PROBE, pr.address(), 256, 0, 0);
            if (res < 0) {
                int e = Syscalls.errno(r.err);
                return "io_uring_register(PROBE) failed: errno=" + e + " (" + Syscalls.errnoName(e) + ")";
            }
            int lastOp = Byte.toUnsignedInt(pr.get(JAVA_BYTE, 0));
            for (int op : new int[] {OP_READ, OP_WRITE, OP_FSYNC, OP_FALLOCATE}) {
                boolean supported = op <= lastOp && (pr.get(JAVA_SHORT,
                        PROBE_OPS + (long) PROBE_OP_BYTES * op + PROBE_OP_FLAGS) & 1) != 0;
                if (!supported) {
                    return "io_uring opcode " + op + " unsupported by this kernel (last_op=" + lastOp + ")";
                }
            }
            return null;
        }
    }

    int sqEntries() {
        return sqEntries;
    }

    /**
     * Writes one SQE at the local tail (not yet visible to the kernel). {@code fd} is a file-table index when
     * {@code sqeFlags} holds {@link #SQE_FIXED_FILE}; {@code bufIndex} is the registered buffer of *_FIXED opcodes.
     */
    void prep(int opcode, int sqeFlags, int fd, long off, long addr, int len, int opFlags, long userData,
              int bufIndex) {
        // eight little-endian 64-bit stores cover the whole SQE (opcode|flags|ioprio|fd, off, addr, len|rw_flags,
        // user_data, buf_index|personality|splice_fd_in, addr3, pad)
        long o = (long) (sqTail & sqMask) * SQE_BYTES;
        sqes.set(JAVA_LONG, o, (opcode & 0xff) | ((sqeFlags & 0xff) << (8 * SQE_FLAGS))
                | ((fd & 0xffffffffL) << (8 * SQE_FD)));
        sqes.set(JAVA_LONG, o + SQE_OFF, off);
        sqes.set(JAVA_LONG, o + SQE_ADDR, addr);
        sqes.set(JAVA_LONG, o + SQE_LEN, (len & 0xffffffffL) | ((long) opFlags << (8 * (SQE_RW_FLAGS - SQE_LEN))));
        sqes.set(JAVA_LONG, o + SQE_USER_DATA, userData);
        sqes.set(JAVA_LONG, o + SQE_BUF_INDEX, bufIndex & 0xffffL);
        sqes.set(JAVA_LONG, o + 48, 0L);
        sqes.set(JAVA_LONG, o + 56, 0L);
        sqTail++;
    }

    /**
     * Registers buffers (IORING_REGISTER_BUFFERS, one iovec per region) so *_FIXED opcodes skip page pinning.
     *
     * @return 0 or -errno
     */
    int registerBuffers(long[] addresses, long[] lengths) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment iov = a.allocate(16L * addresses.length, 8);
            for (int i = 0; i < addresses.length; i++) {
                iov.set(JAVA_LONG, 16L * i, addresses[i]);
                iov.set(JAVA_LONG, 16L * i + 8, lengths[i]);
            }
            return register(REGISTER_BUFFERS, iov.address(), addresses.length);
        }
    }

    /** Registers an empty (sparse) file table of {@code n} slots (IORING_REGISTER_FILES2, Linux 5.13+); 0 or -errno. */
    int registerSparseFiles(int n) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment reg = a.allocate(RSRC_REGISTER_BYTES, 8); // struct io_uring_rsrc_register: nr, flags, resv2, data, tags
            reg.set(JAVA_INT, 0, n);
            reg.set(JAVA_INT, 4, RSRC_REGISTER_SPARSE);
            return register(REGISTER_FILES2, reg.address(), RSRC_REGISTER_BYTES);
        }
    }

    /** Puts {@code fd} into file-table slot {@code slot} (IORING_REGISTER_FILES_UPDATE); 0 or -errno. */
    int updateFile(int slot, int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment up = a.allocate(24, 8); // struct io_uring_files_update: offset, resv, fds pointer
            MemorySegment fds = a.allocate(JAVA_INT);
            fds.set(JAVA_INT, 0, fd);
            up.set(JAVA_INT, 0, slot);
            up.set(JAVA_LONG, FILES_UPDATE_FDS, fds.address());
            long r = register(REGISTER_FILES_UPDATE, up.address(), 1);
            return r == 1 ? 0 : (int) r;
        }
    }

    private int register(int opcode, long arg, int nrArgs) {
        long r = Syscalls.syscall(err, SYS_IO_URING_REGISTER, ringFd, opcode, arg, nrArgs, 0, 0);
        return r < 0 ? -Syscalls.errno(err) : (int) r;
    }

    /** SQEs written but not yet consumed by the kernel. */
    int pending() {
        return sqTail - (int) INT.getAcquire(sq, sqHeadOff);
    }

    /**
     * Publishes the tail and enters the kernel to submit pending SQEs; with {@code waitNs > 0} also waits for one
     * completion up to that long (IORING_ENTER_EXT_ARG; without it the wait is unbounded only if SQEs are pending).
     *
     * @return SQEs submitted; 0 when the kernel asked to retry (EAGAIN/EBUSY)
     */
    int enter(long waitNs) {
        INT.setRelease(sq, sqTailOff, sqTail);
        int toSubmit = pending();
        if (toSubmit == 0 && waitNs <= 0) {
            return 0;
        }
        while (true) {
            long r;
            if (waitNs > 0 && extArg) {
                waitArg.set(JAVA_LONG, 0, 0L);            // sigmask
                waitArg.set(JAVA_INT, 8, 0);               // sigmask_sz
                waitArg.set(JAVA_INT, 12, 0);              // min_wait_usec / pad
                waitArg.set(JAVA_LONG, GETEVENTS_ARG_TS, waitArg.address() + GETEVENTS_ARG_BYTES); // ts
                waitArg.set(JAVA_LONG, GETEVENTS_ARG_BYTES, waitNs / 1_000_000_000L);
                waitArg.set(JAVA_LONG, GETEVENTS_ARG_BYTES + 8, waitNs % 1_000_000_000L);
                r = Syscalls.syscall(err, SYS_IO_URING_ENTER, ringFd, toSubmit, 1,
                        ENTER_GETEVENTS | ENTER_EXT_ARG, waitArg.address(), GETEVENTS_ARG_BYTES);
            } else {
                r = Syscalls.syscall(err, SYS_IO_URING_ENTER, ringFd, toSubmit, 0, 0, 0, 0);
            }
            if (r >= 0) {
                return (int) r;
            }
            int e = Syscalls.errno(err);
            if (e == Syscalls.EINTR || e == ETIME) {
                if (e == ETIME || waitNs > 0) {
                    return 0;
                }
                continue;
            }
            if (e == Syscalls.EAGAIN || e == Syscalls.EBUSY) {
                return 0;
            }
            throw new StoreException("io_uring_enter failed: errno=" + e + " (" + Syscalls.errnoName(e)
                    + "), toSubmit=" + toSubmit, e);
        }
    }

    /** True when a CQE is ready. */
    boolean cqReady() {
        return (int) INT.getAcquire(cq, cqTailOff) != cqHead;
    }

    /**
     * Copies up to {@code max} CQEs: user_data into {@code userData[at + i]}, res into {@code res[at + i]}.
     *
     * @return CQEs consumed
     */
    int reap(long[] userData, int[] res, int at, int max) {
        int tail = (int) INT.getAcquire(cq, cqTailOff);
        int n = 0;
        while (cqHead != tail && n < max) {
            long o = cqesOff + (long) (cqHead & cqMask) * CQE_BYTES;
            userData[at + n] = cq.get(JAVA_LONG, o);
            res[at + n] = cq.get(JAVA_INT, o + CQE_RES);
            cqHead++;
            n++;
        }
        if (n > 0) {
            INT.setRelease(cq, cqHeadOff, cqHead);
        }
        return n;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        Syscalls.munmap(sqesAddr, (long) SQE_BYTES * sqEntries);
        Syscalls.munmap(sqRingAddr, sqRingBytes);
        if (cqRingBytes != 0) {
            Syscalls.munmap(cqRingAddr, cqRingBytes);
        }
        Syscalls.close(ringFd);
        arena.close();
    }
}
