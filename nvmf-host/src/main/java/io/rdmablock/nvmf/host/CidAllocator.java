package io.rdmablock.nvmf.host;

/**
 * Command identifiers of one queue: a 16-bit cid = {@code generation << slotBits | slot}. The slot indexes the
 * queue's preallocated command state; the generation is bumped on every allocation of that slot, so a completion
 * that arrives for an earlier use of the slot (late after a timeout, or a duplicate) carries a cid that no longer
 * matches and is dropped (case C9). With 127 slots (128 entries) {@code slotBits} is 7, leaving 9 bits (512
 * generations) before a cid value repeats for a slot.
 *
 * <p>Not thread-safe: owned by the queue's poller thread. Allocation and release never allocate memory. Same scheme
 * as Linux {@code nvme_cid()} / {@code nvme_genctr_mask} ({@code drivers/nvme/host/nvme.h}), which keeps a 4-bit
 * generation counter in the upper cid bits.
 */
public final class CidAllocator {
    private final int slots;
    private final int slotBits;
    private final int slotMask;
    private final int generationMask;
    /** Current cid per slot, or -1 when the slot is free. */
    private final int[] cidOfSlot;
    private final int[] generation;
    private final int[] freeStack;
    private int freeTop;

    /**
     * @param slots number of command slots, 1 .. 32768 (leaves at least one generation bit)
     * @throws IllegalArgumentException when slots is out of range
     */
    public CidAllocator(int slots) {
        if (slots < 1 || slots > 32768) {
            throw new IllegalArgumentException("invalid slots: slots=" + slots + ", min=1, max=32768");
        }
        this.slots = slots;
        this.slotBits = Math.max(1, 32 - Integer.numberOfLeadingZeros(slots - 1));
        this.slotMask = (1 << slotBits) - 1;
        this.generationMask = (1 << (16 - slotBits)) - 1;
        this.cidOfSlot = new int[slots];
        this.generation = new int[slots];
        this.freeStack = new int[slots];
        for (int i = 0; i < slots; i++) {
            cidOfSlot[i] = -1;
            freeStack[i] = slots - 1 - i;
        }
        freeTop = slots;
    }

    /** Command slots. */
    public int slots() {
        return slots;
    }

    /** Slots busy now. */
    public int inUse() {
        return slots - freeTop;
    }

    /** True when {@link #allocate} would succeed. */
    public boolean hasFree() {
        return freeTop > 0;
    }

    /** Takes a free slot and gives it a new generation; returns the slot, or -1 when every slot is busy. */
    public int allocate() {
        if (freeTop == 0) {
            return -1;
        }
        int slot = freeStack[--freeTop];
        int gen = (generation[slot] + 1) & generationMask;
        generation[slot] = gen;
        cidOfSlot[slot] = (gen << slotBits) | slot;
        return slot;
    }

    /** The cid of a busy slot (-1 when it is free). */
    public int cid(int slot) {
        return cidOfSlot[slot];
    }

    /** True when {@code slot} is allocated. */
    public boolean busy(int slot) {
        return cidOfSlot[slot] >= 0;
    }

    /**
     * Maps a completion's cid to its slot.
     *
     * @return the slot when {@code cid} is the current cid of a busy slot; -1 for a stale, duplicate or unknown cid
     */
    public int lookup(int cid) {
        int slot = cid & slotMask;
        if (slot >= slots || cidOfSlot[slot] != cid) {
            return -1;
        }
        return slot;
    }

    /**
     * Frees a busy slot; a completion with its old cid is dropped by {@link #lookup} from now on.
     *
     * @throws IllegalStateException when the slot is not busy
     */
    public void release(int slot) {
        if (cidOfSlot[slot] < 0) {
            throw new IllegalStateException("slot not busy: slot=" + slot);
        }
        cidOfSlot[slot] = -1;
        freeStack[freeTop++] = slot;
    }
}
