package io.rdmablock.rdma.verbs.emu;

import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.Sge;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The device of an emulated provider ({@code soft0} of {@code soft}, {@code mem0} of {@code memory}): owns the
 * memory-region key table shared by every protection domain on it. Shared implementation of the emulated providers,
 * not an API for users.
 *
 * <p>Keys: lkey and rkey of a region are two independent 32-bit values drawn from a {@link SecureRandom}, never 0 and
 * unique among the keys of the device's open regions (an lkey is never any region's rkey and the reverse), so using
 * one for the other fails, as a mix-up would on hardware that keys them apart, and a peer cannot work out another
 * region's rkey from one it was given: a guess hits an open region with probability (open regions) / 2^32. A key of a
 * closed region is not handed out again before 2^32 draws make it likely. Remote access also needs the region in the
 * protection domain of the queue pair the request arrives on ({@link EmuPd#remote}).
 */
public final class EmuDevice implements DeviceContext {
    static final int MAX_MR = 1 << 20;

    private final String name;
    private final String mrName;
    private final boolean mrViews;
    private final String confinedSegmentMessage;
    private final EmuResources resources;
    private final String cqName;
    private final AtomicInteger qpNumbers = new AtomicInteger(0x11);
    private final Object mrLock = new Object();
    /** Regions by slot ({@link EmuMr#index}, a small dense number the soft engines index their view caches by). */
    private volatile AtomicReferenceArray<EmuMr> mrTable = new AtomicReferenceArray<>(1024);
    private final EmuKeyTable lkeys = new EmuKeyTable(false);
    private final EmuKeyTable rkeys = new EmuKeyTable(true);
    private final SecureRandom keyRandom = new SecureRandom();
    private int mrNextFree;

    /**
     * @param name the device name ({@code soft0}, {@code mem0})
     * @param mrName the simple name a region's {@code toString} begins with ({@code SoftMr}, {@code MemMr})
     * @param mrViews whether regions up to 2 GiB keep a whole-region {@code ByteBuffer} view ({@link EmuMr#base})
     * @param confinedSegmentMessage the message of the {@link IllegalArgumentException} that registering a
     *     thread-confined segment throws (it says which threads of the provider touch the memory)
     * @param resources the provider's open resources: PDs, CQs and MRs made here are tracked there
     * @param cqName the simple name a completion queue's {@code toString} begins with ({@code SoftCq}, {@code MemCq})
     */
    public EmuDevice(String name, String mrName, boolean mrViews, String confinedSegmentMessage,
            EmuResources resources, String cqName) {
        this.name = name;
        this.mrName = mrName;
        this.mrViews = mrViews;
        this.confinedSegmentMessage = confinedSegmentMessage;
        this.resources = resources;
        this.cqName = cqName;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Transport transport() {
        return Transport.SOFT;
    }

    /** No: the emulated providers have no memory-management extensions; posting SEND_WITH_INV fails with EINVAL. */
    @Override
    public boolean supportsSendWithInvalidate() {
        return false;
    }

    /** The provider's open resources. */
    public EmuResources resources() {
        return resources;
    }

    String mrName() {
        return mrName;
    }

    boolean mrViews() {
        return mrViews;
    }

    String confinedSegmentMessage() {
        return confinedSegmentMessage;
    }

    @Override
    public ProtectionDomain allocPd() {
        return resources.track(new EmuPd(this));
    }

    @Override
    public EmuCq createCq(int capacity) {
        if (capacity < 1 || capacity > 65536) {
            throw new IllegalArgumentException("invalid capacity: capacity=" + capacity + ", min=1, max=65536");
        }
        return resources.track(new EmuCq(cqName, name, resources, capacity));
    }

    public int nextQpNum() {
        return qpNumbers.getAndIncrement() & 0xFFFFFF;
    }

    /** Gives {@code mr} a slot and fresh random keys (class comment), enters it in the key tables; returns its lkey. */
    int addMr(EmuMr mr) {
        synchronized (mrLock) {
            AtomicReferenceArray<EmuMr> t = mrTable;
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
                AtomicReferenceArray<EmuMr> bigger = new AtomicReferenceArray<>(t.length() * 2);
                for (int i = 0; i < t.length(); i++) {
                    bigger.set(i, t.get(i));
                }
                idx = t.length();
                mrTable = bigger;
                t = bigger;
            }
            mrNextFree = idx + 1;
            int lkey = freshKey();
            int rkey;
            do {
                rkey = freshKey();
            } while (rkey == lkey);
            mr.setKeys(idx, lkey, rkey);
            t.set(idx, mr);
            lkeys.put(mr);
            rkeys.put(mr);
            return lkey;
        }
    }

    /** A random key, not 0, that is no open region's lkey or rkey. Region lock. */
    private int freshKey() {
        int k;
        do {
            k = keyRandom.nextInt();
        } while (k == 0 || lkeys.get(k) != null || rkeys.get(k) != null);
        return k;
    }

    void removeMr(EmuMr mr) {
        synchronized (mrLock) {
            if (mrTable.compareAndSet(mr.index(), mr, null)) {
                lkeys.remove(mr);
                rkeys.remove(mr);
            }
        }
    }

    /** The region whose lkey is {@code lkey}, or null. */
    public EmuMr byLkey(int lkey) {
        return lkeys.get(lkey);
    }

    /** The region whose rkey is {@code rkey}, or null. */
    public EmuMr byRkey(int rkey) {
        return rkeys.get(rkey);
    }

    /** Source memory of an inline SGE: its region when the lkey covers it (usual), else the raw address. */
    public MemorySegment inlineSource(Sge s) {
        EmuMr mr = byLkey(s.lkey);
        if (mr != null && mr.covers(s.addr, Integer.toUnsignedLong(s.length))) {
            return mr.segment().asSlice(s.addr - mr.address(), s.length);
        }
        return MemorySegment.ofAddress(s.addr).reinterpret(s.length);
    }
}
