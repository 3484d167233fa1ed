package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_MR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.off;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.VerbsException;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** An {@code ibv_pd}; tracks its memory regions so that closing it deregisters them first. */
final class FfmProtectionDomain implements ProtectionDomain {
    private static final long MR_LKEY = off(IBV_MR, "lkey");
    private static final long MR_RKEY = off(IBV_MR, "rkey");

    final FfmDeviceContext device;
    final MemorySegment pd;
    private final Set<FfmMemoryRegion> mrs = ConcurrentHashMap.newKeySet();
    private boolean closed;

    FfmProtectionDomain(FfmDeviceContext device, MemorySegment pd) {
        this.device = device;
        this.pd = pd;
    }

    /**
     * {@code ibv_reg_mr(3)}. On iWARP, LOCAL_WRITE implies REMOTE_WRITE as well: the sink of an RDMA READ is
     * written by the READ response, which iWARP (RFC 5040 tagged buffer model) checks as a remote write.
     */
    @Override
    public MemoryRegion registerMemory(MemorySegment segment, int access) {
        if (!segment.isNative()) {
            throw new IllegalArgumentException("invalid segment: heap segments cannot be registered, use a native segment");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("invalid segment: lengthBytes=0, min=1");
        }
        if ((access & ~Access.ALL) != 0) {
            throw new IllegalArgumentException("invalid access: access=0x" + Integer.toHexString(access)
                    + ", known bits=0x" + Integer.toHexString(Access.ALL));
        }
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("protection domain is closed");
            }
        }
        int nativeAccess = access;
        if (device.iwarp() && (access & Access.LOCAL_WRITE) != 0) {
            nativeAccess |= Access.REMOTE_WRITE;
        }
        MemorySegment mr;
        try {
            mr = (MemorySegment) Native.IBV_REG_MR.invokeExact(Native.errnoSegment(), pd, segment,
                    segment.byteSize(), nativeAccess);
        } catch (Throwable t) {
            throw new VerbsException("ibv_reg_mr failed: " + t, 0, t);
        }
        if (mr.address() == 0) {
            throw Native.fail("ibv_reg_mr", Native.errno(), "lengthBytes=" + segment.byteSize() + ", address=0x"
                    + Long.toHexString(segment.address()) + ", access=0x" + Integer.toHexString(nativeAccess)
                    + ", device=" + device.name());
        }
        mr = mr.reinterpret(IBV_MR.byteSize());
        FfmMemoryRegion r = new FfmMemoryRegion(this, mr, segment, access, mr.get(JAVA_INT, MR_LKEY),
                mr.get(JAVA_INT, MR_RKEY));
        mrs.add(r);
        return r;
    }

    void forget(FfmMemoryRegion r) {
        mrs.remove(r);
    }

    /** Deregisters remaining memory regions, then {@code ibv_dealloc_pd(3)}; idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        RuntimeException first = null;
        for (FfmMemoryRegion r : List.copyOf(mrs)) {
            first = Closer.close(r, first);
        }
        try {
            int rc = (int) Native.IBV_DEALLOC_PD.invokeExact(Native.errnoSegment(), pd);
            if (rc != 0) {
                RuntimeException e = Native.fail("ibv_dealloc_pd", rc > 0 ? rc : Native.errno(),
                        "device=" + device.name() + " (a queue pair still uses it?)");
                first = Closer.close(() -> {
                    throw e;
                }, first);
            }
        } catch (Throwable t) {
            first = Closer.close(() -> {
                throw new VerbsException("ibv_dealloc_pd failed: " + t, 0, t);
            }, first);
        }
        device.forget(this);
        if (first != null) {
            throw first;
        }
    }
}
