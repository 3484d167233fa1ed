package io.rdmablock.rdma.verbs.emu;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import java.lang.foreign.MemorySegment;

/**
 * A protection domain of an emulated provider: regions and queue pairs of different domains cannot use each other's
 * keys. Shared implementation of the emulated providers, not an API for users.
 */
public final class EmuPd implements ProtectionDomain {
    /** An unstarted thread other than any caller: a segment accessible by it is accessible by any thread. */
    private static final Thread PROBE = Thread.ofPlatform().unstarted(() -> { });
    private final EmuDevice device;
    private volatile boolean closed;

    EmuPd(EmuDevice device) {
        this.device = device;
    }

    public EmuDevice device() {
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
            // other threads than the caller's place and fetch payloads: a thread-confined segment cannot be shared
            throw new IllegalArgumentException(device.confinedSegmentMessage());
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
        EmuMr mr = new EmuMr(this, segment, access);
        device.addMr(mr);
        return device.resources().track(mr);
    }

    /**
     * The region behind a local key, in this PD, with {@code access}, covering {@code [addr, addr + len)}; or null
     * (checks of a local SGE at post time, on the posting thread).
     */
    public EmuMr local(int lkey, long addr, long len, int access) {
        EmuMr mr = device.byLkey(lkey);
        if (mr == null || mr.pd() != this || (mr.access() & access) != access || !mr.covers(addr, len)) {
            return null;
        }
        return mr;
    }

    /** The region behind a remote key, open, in this PD, with {@code access}, covering the range; or null. */
    public EmuMr remote(int rkey, long addr, long len, int access) {
        EmuMr mr = device.byRkey(rkey);
        if (mr == null || mr.isClosed() || mr.pd() != this || (mr.access() & access) != access
                || !mr.covers(addr, len)) {
            return null;
        }
        return mr;
    }

    @Override
    public void close() {
        closed = true;
        device.resources().untrack(this);
    }
}
