package io.rdmablock.rdma.verbs.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmablock.rdma.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Downcall handles for libibverbs.so.1, librdmacm.so.1 and the few libc calls the provider needs (poll, fcntl,
 * eventfd, read, write, close). Control-path calls capture {@code errno} with
 * {@link Linker.Option#captureCallState}; their handles take the capture segment ({@link #errnoSegment()}) first.
 *
 * <p>The data-path calls ({@code post_send}, {@code post_recv}, {@code poll_cq}, {@code req_notify_cq}) are static
 * inline in {@code verbs.h}; they are invoked through the function pointers of {@code ibv_context.ops} with the
 * address-first handles {@link #OPS_POST_SEND} etc. They return the error number directly, so they capture nothing.
 *
 * <p>Loading fails with {@link VerbsException} (class initialisation error) if a library is missing.
 */
final class Native {
    static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option ERRNO_OPT = Linker.Option.captureCallState("errno");
    private static final ThreadLocal<MemorySegment> CAPTURE_SEGMENT =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE));

    static final SymbolLookup IBVERBS = load("libibverbs.so.1", "libibverbs1 (Debian) / rdma-core");
    static final SymbolLookup RDMACM = load("librdmacm.so.1", "librdmacm1 (Debian) / rdma-core");
    private static final SymbolLookup LIBC = LINKER.defaultLookup();

    // ---- ibverbs (errno-capturing: first argument is the capture segment)
    static final MethodHandle IBV_GET_DEVICE_LIST = ib("ibv_get_device_list", ADDRESS, ADDRESS);
    static final MethodHandle IBV_FREE_DEVICE_LIST = plain(IBVERBS, "ibv_free_device_list", null, ADDRESS);
    static final MethodHandle IBV_GET_DEVICE_NAME = plain(IBVERBS, "ibv_get_device_name", ADDRESS, ADDRESS);
    static final MethodHandle IBV_QUERY_DEVICE = ib("ibv_query_device", JAVA_INT, ADDRESS, ADDRESS);
    static final MethodHandle IBV_ALLOC_PD = ib("ibv_alloc_pd", ADDRESS, ADDRESS);
    static final MethodHandle IBV_DEALLOC_PD = ib("ibv_dealloc_pd", JAVA_INT, ADDRESS);
    static final MethodHandle IBV_REG_MR = ib("ibv_reg_mr", ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT);
    static final MethodHandle IBV_DEREG_MR = ib("ibv_dereg_mr", JAVA_INT, ADDRESS);
    static final MethodHandle IBV_CREATE_COMP_CHANNEL = ib("ibv_create_comp_channel", ADDRESS, ADDRESS);
    static final MethodHandle IBV_DESTROY_COMP_CHANNEL = ib("ibv_destroy_comp_channel", JAVA_INT, ADDRESS);
    static final MethodHandle IBV_CREATE_CQ =
            ib("ibv_create_cq", ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
    static final MethodHandle IBV_DESTROY_CQ = ib("ibv_destroy_cq", JAVA_INT, ADDRESS);
    static final MethodHandle IBV_GET_CQ_EVENT = ib("ibv_get_cq_event", JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    static final MethodHandle IBV_ACK_CQ_EVENTS = plain(IBVERBS, "ibv_ack_cq_events", null, ADDRESS, JAVA_INT);
    static final MethodHandle IBV_QUERY_QP = ib("ibv_query_qp", JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS);
    static final MethodHandle IBV_MODIFY_QP = ib("ibv_modify_qp", JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
    static final MethodHandle IBV_GET_ASYNC_EVENT = ib("ibv_get_async_event", JAVA_INT, ADDRESS, ADDRESS);
    static final MethodHandle IBV_ACK_ASYNC_EVENT = plain(IBVERBS, "ibv_ack_async_event", null, ADDRESS);
    static final MethodHandle IBV_CREATE_QP = ib("ibv_create_qp", ADDRESS, ADDRESS, ADDRESS);
    static final MethodHandle IBV_DESTROY_QP = ib("ibv_destroy_qp", JAVA_INT, ADDRESS);

    // ---- ibv_context.ops (address-first, no capture): int f(void *obj, ...)
    static final MethodHandle OPS_POST_SEND = ops(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    static final MethodHandle OPS_POST_RECV = OPS_POST_SEND;
    static final MethodHandle OPS_POLL_CQ = ops(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    static final MethodHandle OPS_REQ_NOTIFY_CQ = ops(JAVA_INT, ADDRESS, JAVA_INT);

    // ---- rdma_cm (errno-capturing)
    static final MethodHandle RDMA_CREATE_EVENT_CHANNEL = cm("rdma_create_event_channel", ADDRESS);
    static final MethodHandle RDMA_DESTROY_EVENT_CHANNEL =
            plain(RDMACM, "rdma_destroy_event_channel", null, ADDRESS);
    static final MethodHandle RDMA_CREATE_ID = cm("rdma_create_id", JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT);
    static final MethodHandle RDMA_DESTROY_ID = cm("rdma_destroy_id", JAVA_INT, ADDRESS);
    static final MethodHandle RDMA_BIND_ADDR = cm("rdma_bind_addr", JAVA_INT, ADDRESS, ADDRESS);
    static final MethodHandle RDMA_LISTEN = cm("rdma_listen", JAVA_INT, ADDRESS, JAVA_INT);
    static final MethodHandle RDMA_RESOLVE_ADDR = cm("rdma_resolve_addr", JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT);
    static final MethodHandle RDMA_RESOLVE_ROUTE = cm("rdma_resolve_route", JAVA_INT, ADDRESS, JAVA_INT);
    static final MethodHandle RDMA_CREATE_QP = cm("rdma_create_qp", JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    static final MethodHandle RDMA_DESTROY_QP = plain(RDMACM, "rdma_destroy_qp", null, ADDRESS);
    static final MethodHandle RDMA_CONNECT = cm("rdma_connect", JAVA_INT, ADDRESS, ADDRESS);
    static final MethodHandle RDMA_ACCEPT = cm("rdma_accept", JAVA_INT, ADDRESS, ADDRESS);
    static final MethodHandle RDMA_REJECT = cm("rdma_reject", JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE);
    static final MethodHandle RDMA_DISCONNECT = cm("rdma_disconnect", JAVA_INT, ADDRESS);
    static final MethodHandle RDMA_GET_CM_EVENT = cm("rdma_get_cm_event", JAVA_INT, ADDRESS, ADDRESS);
    static final MethodHandle RDMA_ACK_CM_EVENT = cm("rdma_ack_cm_event", JAVA_INT, ADDRESS);
    static final MethodHandle RDMA_MIGRATE_ID = cm("rdma_migrate_id", JAVA_INT, ADDRESS, ADDRESS);
    static final MethodHandle RDMA_INIT_QP_ATTR = cm("rdma_init_qp_attr", JAVA_INT, ADDRESS, ADDRESS, ADDRESS);

    // ---- libc
    static final MethodHandle POLL = libc("poll", JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT);
    /** {@code ppoll(2)}: fds, nfds, {@code struct timespec *}, sigmask (NULL). */
    static final MethodHandle PPOLL = libc("ppoll", JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS);
    static final MethodHandle FCNTL = capturing(LIBC, "fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT),
            Linker.Option.firstVariadicArg(2));
    static final MethodHandle EVENTFD = libc("eventfd", JAVA_INT, JAVA_INT, JAVA_INT);
    static final MethodHandle READ = libc("read", JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);
    static final MethodHandle WRITE = libc("write", JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);
    static final MethodHandle CLOSE = libc("close", JAVA_INT, JAVA_INT);

    static final int POLLIN = 0x1;
    static final int F_GETFL = 3;
    static final int F_SETFL = 4;
    static final int O_NONBLOCK = 0x800;
    static final int EFD_NONBLOCK = 0x800;
    static final int EFD_CLOEXEC = 0x80000;
    static final short AF_INET = 2;
    static final short AF_INET6 = 10;
    static final int RDMA_PS_TCP = 0x0106;

    private Native() {
    }

    /** The calling thread's errno capture segment (reused; read it right after the call). */
    static MemorySegment errnoSegment() {
        return CAPTURE_SEGMENT.get();
    }

    /** errno captured by the last capturing call on this thread. */
    static int errno() {
        return (int) ERRNO.get(CAPTURE_SEGMENT.get(), 0L);
    }

    /** {@code call failed: errno=N (NAME), details}. */
    static VerbsException fail(String call, int errno, String details) {
        return new VerbsException(call + " failed: errno=" + errno + " (" + Errno.name(errno) + ")"
                + (details == null || details.isEmpty() ? "" : ", " + details), errno);
    }

    /** Reads a NUL-terminated C string (at most 4096 bytes); "" for NULL. */
    static String cString(MemorySegment p) {
        if (p.address() == 0) {
            return "";
        }
        return p.reinterpret(4096).getString(0);
    }

    /** A native pointer as a zero-length segment, reinterpreted to {@code size} bytes. */
    static MemorySegment at(MemorySegment p, long size) {
        return p.reinterpret(size);
    }

    /**
     * A global-scope alias of {@code s} (same address and size). Passing it to a downcall costs no arena
     * acquire/release; the owner must keep the real arena open while the alias is used.
     */
    static MemorySegment unscoped(MemorySegment s) {
        return MemorySegment.ofAddress(s.address()).reinterpret(s.byteSize());
    }

    /** Sets O_NONBLOCK on {@code fd}. */
    static void setNonBlocking(int fd, String what) {
        try {
            int flags = (int) FCNTL.invokeExact(errnoSegment(), fd, F_GETFL, 0);
            if (flags < 0 || (int) FCNTL.invokeExact(errnoSegment(), fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                throw fail("fcntl(O_NONBLOCK)", errno(), what + " fd=" + fd);
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("fcntl(O_NONBLOCK) failed: " + t, 0, t);
        }
    }

    /** Closes a file descriptor, ignoring errors (teardown only). */
    static void closeFd(int fd) {
        if (fd < 0) {
            return;
        }
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable ignored) {
            // teardown: nothing to do
        }
    }

    static short htons(int port) {
        return Short.reverseBytes((short) port);
    }

    static int ntohs(short port) {
        return Short.toUnsignedInt(Short.reverseBytes(port));
    }

    private static SymbolLookup load(String lib, String pkg) {
        try {
            return SymbolLookup.libraryLookup(lib, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new VerbsException(lib + " could not be loaded (install " + pkg + "): " + e.getMessage());
        }
    }

    private static MethodHandle ib(String name, MemoryLayout ret, MemoryLayout... args) {
        return capturing(IBVERBS, name, ret == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(ret, args));
    }

    private static MethodHandle cm(String name, MemoryLayout ret, MemoryLayout... args) {
        return capturing(RDMACM, name, ret == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(ret, args));
    }

    private static MethodHandle capturing(SymbolLookup lookup, String name, FunctionDescriptor fd, Linker.Option... extra) {
        Linker.Option[] opts = new Linker.Option[extra.length + 1];
        opts[0] = ERRNO_OPT;
        System.arraycopy(extra, 0, opts, 1, extra.length);
        return LINKER.downcallHandle(find(lookup, name), fd, opts);
    }

    private static MethodHandle plain(SymbolLookup lookup, String name, MemoryLayout ret, MemoryLayout... args) {
        return LINKER.downcallHandle(find(lookup, name),
                ret == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(ret, args));
    }

    private static MethodHandle libc(String name, MemoryLayout ret, MemoryLayout... args) {
        return plain(LIBC, name, ret, args);
    }

    /** A handle whose first argument is the function pointer; critical: no Java heap access, no upcalls. */
    private static MethodHandle ops(MemoryLayout ret, MemoryLayout... args) {
        return LINKER.downcallHandle(FunctionDescriptor.of(ret, args), Linker.Option.critical(false));
    }

    private static MemorySegment find(SymbolLookup lookup, String name) {
        return lookup.find(name).orElseThrow(() -> new VerbsException("symbol " + name + " not found"));
    }
}
