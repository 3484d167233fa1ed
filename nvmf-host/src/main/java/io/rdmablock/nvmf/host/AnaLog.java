package io.rdmablock.nvmf.host;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The Asymmetric Namespace Access log page (LID 0Ch; NVMe Base 1.4 section 5.14.1.12, Figures 196-198), decoded:
 * header (change count u64, number of group descriptors u16, 6 reserved), then per group: ANAGRPID u32, NNSID u32,
 * change count u64, ANA state u8 (low 4 bits), 15 reserved, NNSID x NSID u32.
 *
 * @param changeCount the log's change count
 * @param groups      the group descriptors in log order
 */
public record AnaLog(long changeCount, List<Group> groups) {
    public static final int OPTIMIZED = 0x01;
    public static final int NON_OPTIMIZED = 0x02;
    public static final int INACCESSIBLE = 0x03;
    public static final int PERSISTENT_LOSS = 0x04;
    public static final int CHANGE = 0x0F;
    /** Header and descriptor sizes before the NSID list. */
    public static final int HEADER_BYTES = 16;
    public static final int DESCRIPTOR_BYTES = 32;

    public AnaLog {
        groups = List.copyOf(groups);
    }

    /**
     * One ANA group descriptor.
     *
     * @param groupId ANAGRPID
     * @param changeCount the group's change count
     * @param state   ANA state, low 4 bits ({@link #OPTIMIZED} ..)
     * @param nsids   the namespaces in the group (empty when the host asked for groups only)
     */
    public record Group(int groupId, long changeCount, int state, List<Integer> nsids) {
        public Group {
            nsids = List.copyOf(nsids);
        }
    }

    /**
     * The state of the group holding {@code nsid}; without such a group, that of the only group when there is one
     * (a target that lists no NSIDs), else -1.
     */
    public int stateOf(int nsid) {
        for (Group g : groups) {
            if (g.nsids().contains(nsid)) {
                return g.state();
            }
        }
        return groups.size() == 1 ? groups.getFirst().state() : -1;
    }

    /** Decodes the log from {@code page} (at most its size is read; a truncated descriptor ends the list). */
    public static AnaLog decode(MemorySegment page) {
        long size = page.byteSize();
        if (size < HEADER_BYTES) {
            throw new IllegalArgumentException("ANA log page too short: " + size + " bytes");
        }
        long change = page.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        int count = Short.toUnsignedInt(page.get(ValueLayout.JAVA_SHORT_UNALIGNED, 8));
        List<Group> groups = new ArrayList<>(Math.min(count, 64));
        long off = HEADER_BYTES;
        for (int i = 0; i < count && off + DESCRIPTOR_BYTES <= size; i++) {
            int id = page.get(ValueLayout.JAVA_INT_UNALIGNED, off);
            long nnsid = Integer.toUnsignedLong(page.get(ValueLayout.JAVA_INT_UNALIGNED, off + 4));
            long gcc = page.get(ValueLayout.JAVA_LONG_UNALIGNED, off + 8);
            int state = page.get(ValueLayout.JAVA_BYTE, off + 16) & 0x0F;
            off += DESCRIPTOR_BYTES;
            List<Integer> nsids = new ArrayList<>();
            for (long n = 0; n < nnsid && off + 4 <= size; n++, off += 4) {
                nsids.add(page.get(ValueLayout.JAVA_INT_UNALIGNED, off));
            }
            groups.add(new Group(id, gcc, state, nsids));
        }
        return new AnaLog(change, groups);
    }

    /** Encodes the log into {@code page} (targets and tests); returns the bytes written. */
    public static int encode(MemorySegment page, long changeCount, List<Group> groups) {
        page.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, changeCount);
        page.set(ValueLayout.JAVA_SHORT_UNALIGNED, 8, (short) groups.size());
        page.asSlice(10, 6).fill((byte) 0);
        long off = HEADER_BYTES;
        for (Group g : groups) {
            page.asSlice(off, DESCRIPTOR_BYTES).fill((byte) 0);
            page.set(ValueLayout.JAVA_INT_UNALIGNED, off, g.groupId());
            page.set(ValueLayout.JAVA_INT_UNALIGNED, off + 4, g.nsids().size());
            page.set(ValueLayout.JAVA_LONG_UNALIGNED, off + 8, g.changeCount());
            page.set(ValueLayout.JAVA_BYTE, off + 16, (byte) (g.state() & 0x0F));
            off += DESCRIPTOR_BYTES;
            for (int n : g.nsids()) {
                page.set(ValueLayout.JAVA_INT_UNALIGNED, off, n);
                off += 4;
            }
        }
        return (int) off;
    }

    /** A state's name for logs. */
    public static String stateName(int state) {
        return switch (state) {
            case OPTIMIZED -> "optimized";
            case NON_OPTIMIZED -> "non-optimized";
            case INACCESSIBLE -> "inaccessible";
            case PERSISTENT_LOSS -> "persistent-loss";
            case CHANGE -> "change";
            default -> "unknown(" + state + ")";
        };
    }
}
