package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@link BlockQueue} on a shared pool of worker threads: each command is one preallocated {@link Op} that a worker
 * runs with {@code pread}/{@code pwritev2}/{@code fdatasync}/{@code fallocate}; finished ops are pushed onto a
 * lock-free multi-producer stack (Treiber) that the owner drains in {@link #reap}. No allocation per I/O in this
 * class (the executor's task queue may allocate a node per command: it is the fallback).
 */
final class PoolBlockQueue extends AbstractBlockQueue {

    private final Executor pool;
    private final Op[] ops;
    private final int[] pending;
    private int pendingCount;
    private final AtomicReference<Op> done = new AtomicReference<>();
    private Op drained;
    private volatile Thread waiter;
    /** Automatic: a worker may still touch its op's segments if close() gave up waiting. */
    private final Arena arena = Arena.ofAuto();

    PoolBlockQueue(VolumeStore store, int capacity, Executor pool) {
        super(store, capacity);
        this.pool = pool;
        this.ops = new Op[capacity];
        for (int i = 0; i < capacity; i++) {
            ops[i] = new Op(i, Syscalls.newErrState(arena), arena.allocate(16, 8));
        }
        this.pending = new int[capacity];
    }

    @Override
    public IoBackend backend() {
        return IoBackend.THREAD_POOL;
    }

    @Override
    void queueRw(int slot, int kind, StoreVolume v, boolean direct, long address, long lengthBytes, long offsetBytes,
                 int rwFlags) {
        ops[slot].set(kind, direct ? v.directFd : v.bufferedFd, address, lengthBytes, offsetBytes, rwFlags);
        pending[pendingCount++] = slot;
    }

    @Override
    void queueFlush(int slot, StoreVolume v) {
        ops[slot].set(KIND_FLUSH, v.directFd, 0, 0, 0, 0);
        pending[pendingCount++] = slot;
    }

    @Override
    void queueFallocate(int slot, StoreVolume v, int mode, long offsetBytes, long lengthBytes) {
        ops[slot].set(KIND_FALLOCATE, v.bufferedFd, 0, lengthBytes, offsetBytes, mode);
        pending[pendingCount++] = slot;
    }

    @Override
    public int submit() {
        int n = pendingCount;
        for (int i = 0; i < n; i++) {
            pool.execute(ops[pending[i]]);
        }
        pendingCount = 0;
        return n;
    }

    @Override
    int reapBackend(long[] userData, int[] result, int at, int max) {
        if (drained == null) {
            drained = reverse(done.getAndSet(null));
        }
        int n = 0;
        while (drained != null && n < max) {
            Op op = drained;
            drained = op.next;
            op.next = null;
            result[at + n] = resultOf(op.slot, op.result);
            userData[at + n] = complete(op.slot);
            n++;
            if (drained == null && n < max) {
                drained = reverse(done.getAndSet(null));
            }
        }
        return n;
    }

    @Override
    boolean backendReady() {
        return drained != null || done.get() != null;
    }

    @Override
    void backendWait(long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        waiter = Thread.currentThread();
        try {
            while (!backendReady()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                LockSupport.parkNanos(this, left);
            }
        } finally {
            waiter = null;
        }
    }

    @Override
    void closeBackend() {
        // segments are freed by the GC once no worker refers to an op
    }

    private static Op reverse(Op head) {
        Op prev = null;
        while (head != null) {
            Op next = head.next;
            head.next = prev;
            prev = head;
            head = next;
        }
        return prev;
    }

    private void finished(Op op) {
        Op h;
        do {
            h = done.get();
            op.next = h;
        } while (!done.compareAndSet(h, op));
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /** One command slot: parameters written by the owner before hand-over, result by the worker. */
    private final class Op implements Runnable {
        final int slot;
        final MemorySegment err;
        final MemorySegment iov;
        int kind;
        int fd;
        long address;
        long lengthBytes;
        long offsetBytes;
        int flags;
        long result;
        Op next;

        Op(int slot, MemorySegment err, MemorySegment iov) {
            this.slot = slot;
            this.err = err;
            this.iov = iov;
        }

        void set(int k, int f, long addr, long len, long off, int fl) {
            kind = k;
            fd = f;
            address = addr;
            lengthBytes = len;
            offsetBytes = off;
            flags = fl;
        }

        @Override
        public void run() {
            long r;
            try {
                r = switch (kind) {
                    case KIND_READ -> read();
                    case KIND_WRITE -> write();
                    case KIND_FLUSH -> sys(Syscalls.fdatasyncRaw(err, fd));
                    default -> sys(Syscalls.fallocateRaw(err, fd, flags, offsetBytes, lengthBytes));
                };
            } catch (RuntimeException e) {
                r = -Syscalls.EIO;
            }
            result = r;
            finished(this);
        }

        private long sys(int r) {
            return r == 0 ? 0 : -Syscalls.errno(err);
        }

        private long read() {
            long done = 0;
            while (done < lengthBytes) {
                long r = Syscalls.pread(err, fd, address + done, lengthBytes - done, offsetBytes + done);
                if (r < 0) {
                    int e = Syscalls.errno(err);
                    if (e == Syscalls.EINTR) {
                        continue;
                    }
                    return -e;
                }
                if (r == 0) {
                    return -Syscalls.EIO; // EOF inside the volume
                }
                done += r;
            }
            return done;
        }

        private long write() {
            long done = 0;
            while (done < lengthBytes) {
                iov.set(JAVA_LONG, 0, address + done);
                iov.set(JAVA_LONG, 8, lengthBytes - done);
                long r = Syscalls.pwritev2(err, fd, iov.address(), offsetBytes + done, flags);
                if (r < 0) {
                    int e = Syscalls.errno(err);
                    if (e == Syscalls.EINTR) {
                        continue;
                    }
                    return -e;
                }
                done += r;
            }
            return done;
        }
    }
}
