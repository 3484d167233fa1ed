package io.rdmablock.rdma.verbs;

/**
 * A scatter/gather element ({@code struct ibv_sge}: addr u64, length u32, lkey u32). Mutable and reusable so that
 * the post path allocates nothing.
 */
public final class Sge {
    /** Native address inside a memory region registered with {@link #lkey}. */
    public long addr;
    /** Length in bytes. */
    public int length;
    /** Local key of the memory region that covers {@code [addr, addr + length)}. */
    public int lkey;

    public Sge set(long addr, int length, int lkey) {
        this.addr = addr;
        this.length = length;
        this.lkey = lkey;
        return this;
    }

    /** Points at {@code [offset, offset + length)} of {@code mr}. */
    public Sge set(MemoryRegion mr, long offset, int length) {
        return set(mr.address() + offset, length, mr.lkey());
    }
}
