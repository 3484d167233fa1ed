package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import java.lang.foreign.MemorySegment;

/** A soft protection domain: regions and queue pairs of different domains cannot use each other's keys. */
final class SoftPd implements ProtectionDomain {
    /** An unstarted thread other than any caller: a segment accessible by it is accessible by the engines. */
    private static final Thread PROBE = Thread.ofPlatform().unstarted(() -> { });
    private final SoftDevice device;
    private volatile boolean closed;

    SoftPd(SoftDevice device) {
        this.device = device;
    }

    SoftDevice device() {
        return device;
    }

    @Override
    public MemoryRegion registerMemory(MemorySegment segment, int access) {
        if (closed) {
            throw new IllegalStateException("protection domain is closed");
        }
        if (segment == null || !segment.isNative()) {
            throw new IllegalArgumentException("invalid segment: only native segments can be registered, segment="
                    + segment);
        }
        if (!segment.isAccessibleBy(PROBE)) {
            // the provider's engine threads place and fetch payloads: a thread-confined segment cannot be shared
            throw new IllegalArgumentException("invalid segment: thread-confined (Arena.ofConfined); the soft provider "
                    + "moves data on its own threads, register memory of a shared, automatic or global arena");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("invalid segment: lengthBytes=0, min=1");
        }
        if ((access & ~Access.ALL) != 0) {
            throw new IllegalArgumentException("invalid access: access=0x" + Integer.toHexString(access)
                    + ", known bits=0x" + Integer.toHexString(Access.ALL));
        }
        if ((access & Access.REMOTE_WRITE) != 0 && (access & Access.LOCAL_WRITE) == 0) {
            // ibv_reg_mr(3): EINVAL when REMOTE_WRITE is asked for without LOCAL_WRITE.
            throw new IllegalArgumentException("invalid access: REMOTE_WRITE requires LOCAL_WRITE, access=0x"
                    + Integer.toHexString(access));
        }
        if (segment.isReadOnly() && (access & (Access.LOCAL_WRITE | Access.REMOTE_WRITE)) != 0) {
            throw new IllegalArgumentException("invalid access: read-only segment with write access");
        }
        SoftMr mr = new SoftMr(this, segment, access);
        device.addMr(mr);
        return device.provider().track(mr);
    }

    @Override
    public void close() {
        closed = true;
        device.provider().untrack(this);
    }
}
