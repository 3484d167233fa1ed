package io.rdmablock.tools.bench;

import java.util.function.LongSupplier;

/**
 * Offsets of a job with an {@code rw} offset modifier (fio HOWTO "readwrite" and "rw_sequencer"), line for line as
 * fio's io_u.c {@code get_next_offset}, {@code get_next_block} and {@code get_next_seq_offset}, fio's quirks kept:
 * per direction the end of the last I/O ({@code last_pos}) and its start ({@code last_start}); a sequential next
 * offset is {@code last_pos} plus the modifier ({@code ddir_seq_add}), wrapping to the region start when beyond the
 * device (forwards) or to the region's length plus the (negative) modifier (backwards); a random job takes a new
 * random offset every {@code ddir_seq_nr}-th I/O (the first one included) and between them continues sequentially
 * ({@code rw_sequencer=sequential}; a random one when that reaches the device end) or repeats the last offset
 * ({@code identical}). An offset at or beyond the region's length (relative to its start) or an I/O beyond the
 * device ends the pass: {@link #next} returns -1. Offsets are absolute byte offsets on the device. Not thread-safe
 * (the {@link IoChooser} holding it is).
 */
final class OffsetSequencer {
    private static final long FAIL = Long.MIN_VALUE;
    private final PatternOptions p;
    private final boolean random;
    private final boolean timeBased;
    private final long fileOffset;
    private final long ioSize;
    private final long realSize;
    private final long[] lastPos = new long[2];
    private final long[] lastStart = {-1, -1};
    private long countdown = 1; // fio's td->ddir_seq_nr starts at 1: the first I/O takes a new offset

    /**
     * @param regionStart  the job's {@code offset} in bytes (fio's file_offset)
     * @param regionLength the job's size in bytes (fio's io_size)
     * @param capacity     the device size in bytes (fio's real_file_size)
     */
    OffsetSequencer(JobSpec spec, long regionStart, long regionLength, long capacity) {
        this.p = spec.pattern;
        this.random = spec.rw.random;
        this.timeBased = spec.timeBased;
        this.fileOffset = regionStart;
        this.ioSize = regionLength;
        this.realSize = capacity;
        reset();
    }

    /** Starts a new pass (fio's fio_file_reset when the file is opened again). */
    void reset() {
        lastPos[0] = lastPos[1] = fileOffset;
        lastStart[0] = lastStart[1] = -1;
    }

    /**
     * The next offset of direction {@code d} (0 read, 1 write) for an I/O of {@code len} bytes, or -1 when the pass
     * is over; {@code randomOffset} gives a random absolute offset of the job's distribution.
     */
    long next(int d, int len, LongSupplier randomOffset) {
        boolean hit = p.seqNr > 0 && --countdown == 0;
        if (hit) {
            countdown = p.seqNr;
        }
        long off;
        if (hit) {
            off = random ? randomOffset.getAsLong() - fileOffset : seqOffset(d);
        } else if (!p.identical) {
            off = seqOffset(d);
            if (off == FAIL) {
                off = randomOffset.getAsLong() - fileOffset;
            }
        } else {
            off = lastStart[d] != -1 ? lastStart[d] - fileOffset : 0;
        }
        if (off == FAIL || Long.compareUnsigned(off, ioSize) >= 0) {
            return -1;
        }
        off += fileOffset;
        if (off >= realSize || off + len > realSize) {
            return -1;
        }
        lastPos[d] = off + len;
        lastStart[d] = off;
        return off;
    }

    /** fio's get_next_seq_offset: the next sequential offset relative to the region start, or FAIL. */
    private long seqOffset(int d) {
        if (lastPos[d] >= ioSize + fileOffset && timeBased) {
            lastPos[d] = fileOffset;
        }
        if (lastPos[d] >= realSize) {
            return FAIL;
        }
        if (lastPos[d] == fileOffset && fileOffset != 0 && p.seqAdd < 0) {
            lastPos[d] = Math.min(realSize, ioSize); // fio mixes the absolute and the relative position here
        }
        long pos = lastPos[d] - fileOffset;
        if (pos != 0 && p.seqAdd != 0) {
            pos += p.seqAdd;
            if (Long.compareUnsigned(pos, realSize) >= 0) { // unsigned in fio: a negative pos is beyond too
                pos = p.seqAdd > 0 ? fileOffset : Math.min(realSize, ioSize) + p.seqAdd;
            }
        }
        return pos;
    }
}
