package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The memory device {@code mem0}: owns the memory-region key table shared by every protection domain on it.
 *
 * <p>Keys: {@code lkey = index << 8 | generation} (generation 7 bits), {@code rkey = lkey | 0x80}, so lkey and rkey of
 * one region differ and using one for the other fails, as a mix-up would on hardware that keys them apart.
 */
final class MemDevice implements DeviceContext {
    static final String NAME = "mem0";
    static final int MAX_MR = 1 << 20;

    private final MemVerbsProvider provider;
    private final AtomicInteger qpNumbers = new AtomicInteger(0x11);
    private final Object mrLock = new Object();
    private volatile AtomicReferenceArray<MemMr> mrTable = new AtomicReferenceArray<>(1024);
    private int mrNextFree;
    private int generation;

    MemDevice(MemVerbsProvider provider) {
        this.provider = provider;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Transport transport() {
        return Transport.SOFT;
    }

    /** No memory-management extensions (like soft): posting SEND_WITH_INV fails with EINVAL. */
    @Override
    public boolean supportsSendWithInvalidate() {
        return false;
    }

    MemVerbsProvider provider() {
        return provider;
    }

    @Override
    public ProtectionDomain allocPd() {
        return provider.track(new MemPd(this));
    }

    @Override
    public CompletionQueue createCq(int capacity) {
        if (capacity < 1 || capacity > 65536) {
            throw new IllegalArgumentException("invalid capacity: capacity=" + capacity + ", min=1, max=65536");
        }
        return provider.track(new MemCq(provider, capacity));
    }

    int nextQpNum() {
        return qpNumbers.getAndIncrement() & 0xFFFFFF;
    }

    /** Enters {@code mr} in the key table and returns its lkey. */
    int addMr(MemMr mr) {
        synchronized (mrLock) {
            AtomicReferenceArray<MemMr> t = mrTable;
            int idx = -1;
            for (int i = 0; i < t.length(); i++) {
                int j = (mrNextFree + i) % t.length();
                if (t.get(j) == null) {
                    idx = j;
                    break;
                }
            }
            if (idx < 0) {
                if (t.length() >= MAX_MR) {
                    throw new io.rdmablock.rdma.verbs.VerbsException(
                            "ibv_reg_mr failed: errno=12 (ENOMEM), too many memory regions, max=" + MAX_MR, 12);
                }
                AtomicReferenceArray<MemMr> bigger = new AtomicReferenceArray<>(t.length() * 2);
                for (int i = 0; i < t.length(); i++) {
                    bigger.set(i, t.get(i));
                }
                idx = t.length();
                mrTable = bigger;
                t = bigger;
            }
            mrNextFree = idx + 1;
            generation = (generation + 1) & 0x7F;
            int lkey = idx << 8 | generation;
            mr.setKeys(idx, lkey, lkey | 0x80);
            t.set(idx, mr);
            return lkey;
        }
    }

    void removeMr(MemMr mr) {
        synchronized (mrLock) {
            mrTable.compareAndSet(mr.index(), mr, null);
        }
    }

    /** The region whose lkey is {@code lkey}, or null. */
    MemMr byLkey(int lkey) {
        MemMr mr = lookup(lkey);
        return mr != null && mr.lkey() == lkey ? mr : null;
    }

    /** The region whose rkey is {@code rkey}, or null. */
    MemMr byRkey(int rkey) {
        MemMr mr = lookup(rkey);
        return mr != null && mr.rkey() == rkey ? mr : null;
    }

    private MemMr lookup(int key) {
        int idx = key >>> 8;
        AtomicReferenceArray<MemMr> t = mrTable;
        return idx < t.length() ? t.get(idx) : null;
    }
}
