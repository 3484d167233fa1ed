package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * libc through {@code java.lang.foreign} (x86_64 / aarch64 Linux, glibc): file descriptors, positional I/O,
 * {@code fallocate}, {@code statx}, {@code mmap} and the raw {@code syscall} used by the io_uring binding.
 *
 * <p>Calls that take an {@code errState} segment capture errno into it ({@link #newErrState}, read with
 * {@link #errno}); hot paths preallocate one per thread or ring. The convenience wrappers throw
 * {@link StoreException} naming the call, errno and arguments.
 */
final class Syscalls {

    static final int O_RDONLY = 0;
    static final int O_RDWR = 2;
    static final int O_CREAT = 0100;
    static final int O_EXCL = 0200;
    static final int O_DIRECT = 040000;
    static final int O_DIRECTORY = 0200000;
    static final int O_CLOEXEC = 02000000;

    static final int FALLOC_FL_KEEP_SIZE = 0x01;
    static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    static final int FALLOC_FL_ZERO_RANGE = 0x10;

    static final int RWF_DSYNC = 0x02;

    // struct statx (<linux/stat.h>, checked by IoUringLayoutTest)
    static final int STATX_DIOALIGN = 0x2000;
    static final int STATX_BYTES = 256;
    static final int STATX_DIO_MEM_ALIGN = 152;
    static final int STATX_DIO_OFFSET_ALIGN = 156;

    static final int EINTR = 4;
    static final int EIO = 5;
    static final int ENXIO = 6;
    static final int EAGAIN = 11;
    static final int EBUSY = 16;
    static final int EINVAL = 22;
    static final int EROFS = 30;
    static final int ENOSYS = 38;
    static final int EOPNOTSUPP = 95;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final StructLayout ERR_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = ERR_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");

    private static final MethodHandle OPEN = h("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle CLOSE = h("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle FTRUNCATE = h("ftruncate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle FSYNC = h("fsync", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle FDATASYNC = h("fdatasync", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle FALLOCATE = h("fallocate",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle PREAD = h("pread",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle PWRITEV2 = h("pwritev2",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    private static final MethodHandle COPY_FILE_RANGE = h("copy_file_range",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle LSEEK = h("lseek", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    private static final MethodHandle STATX = h("statx",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle MMAP = h("mmap",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle MUNMAP = h("munmap", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle SYSCALL6 = h("syscall", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), Linker.Option.firstVariadicArg(1));

    private Syscalls() {
    }

    private static MethodHandle h(String name, FunctionDescriptor fd, Linker.Option... extra) {
        Linker.Option[] opts = new Linker.Option[extra.length + 1];
        opts[0] = CAPTURE;
        System.arraycopy(extra, 0, opts, 1, extra.length);
        MemorySegment sym = LIBC.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc symbol not found: " + name));
        return LINKER.downcallHandle(sym, fd, opts);
    }

    /** A segment to capture errno into, allocated in {@code arena}. */
    static MemorySegment newErrState(Arena arena) {
        return arena.allocate(ERR_LAYOUT);
    }

    static int errno(MemorySegment errState) {
        return (int) ERRNO.get(errState, 0L);
    }

    private static final ThreadLocal<MemorySegment> ERR = ThreadLocal.withInitial(() -> newErrState(Arena.global()));

    /** This thread's errno capture segment (for calls off the hot path and for worker threads). */
    static MemorySegment threadErrState() {
        return ERR.get();
    }

    // ---- raw calls: return the libc result; errno in errState ----

    static long pread(MemorySegment err, int fd, long bufAddress, long lengthBytes, long offsetBytes) {
        try {
            return (long) PREAD.invokeExact(err, fd, bufAddress, lengthBytes, offsetBytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** pwritev2(2) of one iovec at {@code iov} (16 bytes: base, length). */
    static long pwritev2(MemorySegment err, int fd, long iovAddress, long offsetBytes, int flags) {
        try {
            return (long) PWRITEV2.invokeExact(err, fd, iovAddress, 1, offsetBytes, flags);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Copies {@code lengthBytes} from {@code srcOffset} to {@code dstOffset} of the same file inside the kernel
     * ({@code copy_file_range(2)}: no copy through user space; a reflink on file systems that share extents),
     * looping over short copies. A range past the end of the file reads as zeroes (the copy stops, the rest is left
     * a hole).
     *
     * @return 0, or {@code -errno}
     */
    static int copyRange(int fd, long srcOffset, long dstOffset, long lengthBytes) {
        MemorySegment err = threadErrState();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment offIn = a.allocate(8, 8);
            MemorySegment offOut = a.allocate(8, 8);
            offIn.set(JAVA_LONG, 0, srcOffset);
            offOut.set(JAVA_LONG, 0, dstOffset);
            long left = lengthBytes;
            while (left > 0) {
                long r = (long) COPY_FILE_RANGE.invokeExact(err, fd, offIn, fd, offOut, left, 0);
                if (r < 0) {
                    int e = errno(err);
                    if (e == EINTR) {
                        continue;
                    }
                    return -e;
                }
                if (r == 0) {
                    return 0; // end of file: the rest reads zero in the destination's hole
                }
                left -= r;
            }
            return 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int fdatasyncRaw(MemorySegment err, int fd) {
        try {
            return (int) FDATASYNC.invokeExact(err, fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int fallocateRaw(MemorySegment err, int fd, int mode, long offsetBytes, long lengthBytes) {
        try {
            return (int) FALLOCATE.invokeExact(err, fd, mode, offsetBytes, lengthBytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static long syscall(MemorySegment err, long nr, long a0, long a1, long a2, long a3, long a4, long a5) {
        try {
            return (long) SYSCALL6.invokeExact(err, nr, a0, a1, a2, a3, a4, a5);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** mmap(2); returns the address or throws. */
    static long mmap(long lengthBytes, int prot, int flags, int fd, long offset, String what) {
        MemorySegment err = threadErrState();
        long addr;
        try {
            addr = (long) MMAP.invokeExact(err, 0L, lengthBytes, prot, flags, fd, offset);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (addr == -1L) {
            int e = errno(err);
            throw new StoreException("mmap failed: errno=" + e + " (" + errnoName(e) + "), what=" + what
                    + ", lengthBytes=" + lengthBytes, e);
        }
        return addr;
    }

    static void munmap(long addr, long lengthBytes) {
        try {
            int r = (int) MUNMAP.invokeExact(threadErrState(), addr, lengthBytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- checked wrappers (management path) ----

    static int open(Path path, boolean direct) {
        return openFlags(path, O_RDWR | O_CLOEXEC | (direct ? O_DIRECT : 0), 0);
    }

    static int openFlags(Path path, int flags, int mode) {
        MemorySegment err = threadErrState();
        try (Arena a = Arena.ofConfined()) {
            int fd = (int) OPEN.invokeExact(err, a.allocateFrom(path.toString()), flags, mode);
            if (fd < 0) {
                int e = errno(err);
                throw new StoreException("open failed: errno=" + e + " (" + errnoName(e) + "), path=" + path
                        + ", flags=0" + Integer.toOctalString(flags), e);
            }
            return fd;
        } catch (StoreException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static void close(int fd) {
        try {
            int r = (int) CLOSE.invokeExact(threadErrState(), fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Creates {@code path} (must not exist) as a sparse file of {@code sizeBytes} and fsyncs it. */
    static void createSparseFile(Path path, long sizeBytes) {
        int fd = openFlags(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        try {
            ftruncate(fd, sizeBytes, path);
            fsync(fd, path);
        } finally {
            close(fd);
        }
    }

    static void fsyncDirectory(Path dir) {
        int fd = openFlags(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        try {
            fsync(fd, dir);
        } finally {
            close(fd);
        }
    }

    static void ftruncate(int fd, long sizeBytes, Path path) {
        MemorySegment err = threadErrState();
        int r;
        try {
            r = (int) FTRUNCATE.invokeExact(err, fd, sizeBytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(r, err, "ftruncate", "path=" + path + ", sizeBytes=" + sizeBytes);
    }

    static void fsync(int fd, Path path) {
        MemorySegment err = threadErrState();
        int r;
        try {
            r = (int) FSYNC.invokeExact(err, fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check(r, err, "fsync", "path=" + path);
    }

    /** File size through lseek(SEEK_END). */
    static long fileSize(int fd, Path path) {
        MemorySegment err = threadErrState();
        long r;
        try {
            r = (long) LSEEK.invokeExact(err, fd, 0L, 2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r < 0) {
            int e = errno(err);
            throw new StoreException("lseek failed: errno=" + e + " (" + errnoName(e) + "), path=" + path, e);
        }
        return r;
    }

    /**
     * Reserves {@code [offsetBytes, offsetBytes + lengthBytes)} of a file ({@code fallocate(2)} with
     * {@code FALLOC_FL_KEEP_SIZE}: the size is not changed), then fsyncs it.
     *
     * @return false when the file system has no fallocate (EOPNOTSUPP): nothing reserved
     * @throws StoreException with the errno on any other failure (ENOSPC: does not fit)
     */
    static boolean reserve(int fd, long offsetBytes, long lengthBytes, Path file) {
        MemorySegment err = threadErrState();
        int r;
        do {
            r = fallocateRaw(err, fd, FALLOC_FL_KEEP_SIZE, offsetBytes, lengthBytes);
        } while (r < 0 && errno(err) == EINTR);
        if (r < 0) {
            int e = errno(err);
            if (e == EOPNOTSUPP) {
                return false;
            }
            throw new StoreException("preallocate failed: path=" + file + ", offsetBytes=" + offsetBytes
                    + ", lengthBytes=" + lengthBytes + ": errno=" + e + " (" + errnoName(e) + ")", e);
        }
        fsync(fd, file);
        return true;
    }

    /**
     * Bytes the file system has allocated to {@code path} (statx(2) STATX_BLOCKS: stx_blocks x 512, offset 48 of
     * struct statx), or -1 when it cannot say.
     */
    static long allocatedBytes(Path path) {
        final int statxBlocks = 0x400;
        MemorySegment err = threadErrState();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(STATX_BYTES, 8);
            int r = (int) STATX.invokeExact(err, -100, a.allocateFrom(path.toString()), 0, statxBlocks, buf);
            if (r != 0 || (buf.get(JAVA_INT, 0) & statxBlocks) == 0) {
                return -1;
            }
            return buf.get(java.lang.foreign.ValueLayout.JAVA_LONG, 48) * 512;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * statx(2) with STATX_DIOALIGN (Linux 6.1+) on {@code path}.
     *
     * @return {memAlign, offsetAlign}, or null when the kernel or filesystem does not report it
     */
    static int[] dioAlign(Path path) {
        final int statxDioalign = STATX_DIOALIGN;
        MemorySegment err = threadErrState();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(STATX_BYTES, 8);
            int r = (int) STATX.invokeExact(err, -100, a.allocateFrom(path.toString()), 0, statxDioalign, buf);
            if (r != 0) {
                return null;
            }
            int mask = buf.get(JAVA_INT, 0);
            int memAlign = buf.get(JAVA_INT, STATX_DIO_MEM_ALIGN);
            int offAlign = buf.get(JAVA_INT, STATX_DIO_OFFSET_ALIGN);
            if ((mask & statxDioalign) == 0 || memAlign == 0 || offAlign == 0) {
                return null;
            }
            return new int[] {memAlign, offAlign};
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static void check(int r, MemorySegment err, String call, String args) {
        if (r != 0) {
            int e = errno(err);
            throw new StoreException(call + " failed: errno=" + e + " (" + errnoName(e) + "), " + args, e);
        }
    }

    static String errnoName(int e) {
        return switch (e) {
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case EINTR -> "EINTR";
            case EIO -> "EIO";
            case ENXIO -> "ENXIO";
            case 9 -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case 12 -> "ENOMEM";
            case 13 -> "EACCES";
            case 14 -> "EFAULT";
            case EBUSY -> "EBUSY";
            case 17 -> "EEXIST";
            case EINVAL -> "EINVAL";
            case 24 -> "EMFILE";
            case 27 -> "EFBIG";
            case 28 -> "ENOSPC";
            case 30 -> "EROFS";
            case ENOSYS -> "ENOSYS";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            case 125 -> "ECANCELED";
            default -> "errno " + e;
        };
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
