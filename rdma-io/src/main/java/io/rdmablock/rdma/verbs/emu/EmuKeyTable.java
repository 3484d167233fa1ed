package io.rdmablock.rdma.verbs.emu;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Memory regions by one of their keys (the lkeys of a device, or its rkeys): an open-addressing table of a power-of-
 * two capacity, linear probing, at most half full (live entries and tombstones). Lookups take no lock and allocate
 * nothing (the engines call them per RDMA operation); {@link #put} and {@link #remove} run under the device's region
 * lock. A lookup that raced with a resize reads the previous table, as if it had run just before.
 */
final class EmuKeyTable {
    private static final Object TOMBSTONE = new Object();
    private final boolean remote;
    private volatile AtomicReferenceArray<Object> slots = new AtomicReferenceArray<>(1024);
    private int live;
    private int used;

    /** @param remote true for a table of rkeys, false for lkeys */
    EmuKeyTable(boolean remote) {
        this.remote = remote;
    }

    private int keyOf(EmuMr mr) {
        return remote ? mr.rkey() : mr.lkey();
    }

    private static int home(int key, int mask) {
        return (key * 0x9E3779B9) >>> 7 & mask;
    }

    /** The region with key {@code key}, or null. Any thread, no lock. */
    EmuMr get(int key) {
        AtomicReferenceArray<Object> t = slots;
        int mask = t.length() - 1;
        for (int i = home(key, mask), n = 0; n <= mask; i = (i + 1) & mask, n++) {
            Object o = t.get(i);
            if (o == null) {
                return null;
            }
            if (o instanceof EmuMr mr && keyOf(mr) == key) {
                return mr;
            }
        }
        return null;
    }

    /** Enters {@code mr} under its key, which no entry has (the caller checked with {@link #get}). Region lock. */
    void put(EmuMr mr) {
        if (2 * (used + 1) > slots.length()) {
            rehash(4 * (live + 1) > slots.length() ? 2 * slots.length() : slots.length());
        }
        if (insert(slots, mr)) {
            used++;
        }
        live++;
    }

    /** Removes {@code mr} if present. Region lock. */
    void remove(EmuMr mr) {
        AtomicReferenceArray<Object> t = slots;
        int mask = t.length() - 1;
        for (int i = home(keyOf(mr), mask), n = 0; n <= mask; i = (i + 1) & mask, n++) {
            Object o = t.get(i);
            if (o == null) {
                return;
            }
            if (o == mr) {
                t.set(i, TOMBSTONE);
                live--;
                return;
            }
        }
    }

    /** Puts {@code mr} in the first free or tombstone slot of its probe; true when that slot was free (never used). */
    private boolean insert(AtomicReferenceArray<Object> t, EmuMr mr) {
        int mask = t.length() - 1;
        for (int i = home(keyOf(mr), mask); ; i = (i + 1) & mask) {
            Object o = t.get(i);
            if (o == null || o == TOMBSTONE) {
                t.set(i, mr);
                return o == null;
            }
        }
    }

    private void rehash(int capacity) {
        AtomicReferenceArray<Object> old = slots;
        AtomicReferenceArray<Object> t = new AtomicReferenceArray<>(capacity);
        for (int i = 0; i < old.length(); i++) {
            if (old.get(i) instanceof EmuMr mr) {
                insert(t, mr);
            }
        }
        used = live;
        slots = t;
    }
}
