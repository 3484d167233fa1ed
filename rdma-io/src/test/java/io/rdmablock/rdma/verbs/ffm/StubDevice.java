package io.rdmablock.rdma.verbs.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmablock.rdma.verbs.QpInitAttr;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * The fake device of {@code src/test/c/verbs_stub.c}, built with gcc into {@code target/ffm-native}: an
 * {@code ibv_context} whose ops table points at stub post/poll functions, one CQ and one QP wrapped as ffm objects.
 */
final class StubDevice {
    static final Path LIB = Gcc.OUT.resolve("libverbsstub.so");
    private static SymbolLookup lookup;

    final FfmDeviceContext device;
    final FfmCompletionQueue cq;
    final FfmQueuePair qp;

    private StubDevice(QpInitAttr attr) throws Throwable {
        SymbolLookup l = load();
        device = FfmDeviceContext.unqueried(call(l, "stub_context"));
        cq = FfmCompletionQueue.external(device, call(l, "stub_cq"));
        attr.sendCq = cq;
        attr.recvCq = cq;
        qp = new FfmQueuePair(device, FfmQueuePair.Owner.EXTERNAL, MemorySegment.NULL, call(l, "stub_qp"), attr);
        reset();
    }

    static StubDevice open(QpInitAttr attr) throws Throwable {
        return new StubDevice(attr);
    }

    /** Compiles the stub library once per JVM. */
    static synchronized SymbolLookup load() throws Exception {
        if (lookup == null) {
            Gcc.compile("-O2", "-Wall", "-shared", "-fPIC", "-o", LIB.toString(),
                    Gcc.SRC.resolve("verbs_stub.c").toString());
            lookup = SymbolLookup.libraryLookup(LIB.toAbsolutePath(), Arena.global());
        }
        return lookup;
    }

    private static MemorySegment call(SymbolLookup l, String name) throws Throwable {
        MethodHandle h = Linker.nativeLinker().downcallHandle(l.find(name).orElseThrow(), FunctionDescriptor.of(ADDRESS));
        return (MemorySegment) h.invokeExact();
    }

    private static MethodHandle handle(String name, FunctionDescriptor fd) {
        return Linker.nativeLinker().downcallHandle(lookup.find(name).orElseThrow(), fd);
    }

    void reset() throws Throwable {
        handle("stub_reset", FunctionDescriptor.ofVoid()).invokeExact();
    }

    /** The stub fails the {@code index}-th WR of the next post_send with {@code errno}. */
    void failPostSend(int index, int errno) throws Throwable {
        handle("stub_fail_post_send", FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT)).invokeExact(index, errno);
    }

    void pollError(boolean on) throws Throwable {
        handle("stub_set_poll_error", FunctionDescriptor.ofVoid(JAVA_INT)).invokeExact(on ? 1 : 0);
    }

    long sends() throws Throwable {
        return (long) handle("stub_sends", FunctionDescriptor.of(JAVA_LONG)).invokeExact();
    }

    /** The last send WR the stub saw, as a native {@code ibv_send_wr}. */
    MemorySegment lastWr() throws Throwable {
        MemorySegment p = (MemorySegment) handle("stub_last_wr", FunctionDescriptor.of(ADDRESS)).invokeExact();
        return p.reinterpret(NativeStructs.IBV_SEND_WR.byteSize());
    }

    /** The SGEs of the last send WR (up to 4). */
    MemorySegment lastSges() throws Throwable {
        MemorySegment p = (MemorySegment) handle("stub_last_sge", FunctionDescriptor.of(ADDRESS)).invokeExact();
        return p.reinterpret(NativeStructs.IBV_SGE.byteSize() * 4);
    }
}
