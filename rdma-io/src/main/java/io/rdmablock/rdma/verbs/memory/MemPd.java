package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import java.lang.foreign.MemorySegment;

/** A memory-provider protection domain: regions and queue pairs of different domains cannot use each other's keys. */
final class MemPd implements ProtectionDomain {
    /** An unstarted thread other than any caller: a segment accessible by it is accessible by any thread. */
    private static final Thread PROBE = Thread.ofPlatform().unstarted(() -> { });
    private final MemDevice device;
    private volatile boolean closed;

    MemPd(MemDevice device) {
        this.device = device;
    }

    MemDevice device() {
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
            // the peer's posting thread may place or fetch payloads: a thread-confined segment cannot be shared
            throw new IllegalArgumentException("invalid segment: thread-confined (Arena.ofConfined); the memory "
                    + "provider moves data on the threads of both ends of a connection, register memory of a shared, "
                    + "automatic or global arena");
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
        MemMr mr = new MemMr(this, segment, access);
        device.addMr(mr);
        return device.provider().track(mr);
    }

    @Override
    public void close() {
        closed = true;
        device.provider().untrack(this);
    }
}
