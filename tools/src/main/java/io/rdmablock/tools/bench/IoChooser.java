package io.rdmablock.tools.bench;

import java.util.List;
import java.util.SplittableRandom;

/**
 * Chooses each I/O of a job clone: direction ({@code rwmixread}), length ({@code bs}, {@code bssplit}) and offset
 * (sequential, or random by {@code random_distribution} on a grid of {@code blockalign} bytes, default the block
 * size; fio's {@code get_next_rand_offset}: offset = region start + b x align, b drawn over the blocks whose I/O of
 * the largest length still ends inside the region). One generator for the clone, seeded from {@link JobSpec#seed()}
 * plus the clone index, so with {@code randrepeat=1} (fio's default) the same job file chooses the same sequence
 * every run. Sequential offsets wrap at the region end. Thread-safe (synchronized: I/O units of a clone complete on
 * several threads).
 */
final class IoChooser {
    /** The chosen I/O: a read, a write, or (trim) a deallocation of the range. */
    record Choice(boolean read, int lengthBytes, long offsetBytes, boolean trim) {
        Choice(boolean read, int lengthBytes, long offsetBytes) {
            this(read, lengthBytes, offsetBytes, false);
        }
    }

    private final JobSpec spec;
    private final long regionStart;
    private final long regionLength;
    private final SplittableRandom rng;
    private final OffsetDistribution readDist;
    private final OffsetDistribution writeDist;
    private final long readAlign;
    private final long writeAlign;
    /** bssplit per direction, [0] reads, [1] writes and trims: sizes and cumulative shares in 1/100 percent. */
    private final int[][] splitBs = new int[2][];
    private final int[][] splitCumPct = new int[2][];
    private long seq;
    /** Offsets of a job with an rw offset modifier (fio's ddir_seq_add / ddir_seq_nr), else null. */
    private final OffsetSequencer sequencer;
    /** The job ends after one pass over the region: fill_device and the region reaches the device's end. */
    private final boolean fillsDevice;
    private int passes;
    /** rw=trimwrite/randtrimwrite: the write that follows the last trim, at its range (fio's last_start), or null. */
    private Choice trimmed;
    /** number_ios: I/Os and bytes of the current loop, and loops done (fio counts number_ios per loop). */
    private long loopIos;
    private long loopBytes;
    private int loop;
    private final long bytesPerLoop;

    /**
     * @throws IllegalArgumentException when a block size or the alignment is not a multiple of {@code lbaSize}, or
     *                                  the region is smaller than the largest block
     */
    IoChooser(JobSpec spec, long regionStart, long regionLength, int lbaSize, long seed) {
        this(spec, regionStart, regionLength, regionStart + regionLength, lbaSize, seed);
    }

    /** @param capacity the device size in bytes (where fill_device ends the job, and fio's real_file_size) */
    IoChooser(JobSpec spec, long regionStart, long regionLength, long capacity, int lbaSize, long seed) {
        this.spec = spec;
        this.regionStart = regionStart;
        this.regionLength = regionLength;
        this.rng = new SplittableRandom(seed);
        check("bs", spec.bsRead, lbaSize);
        check("bs", spec.bsWrite, lbaSize);
        int[] minSplit = {Integer.MAX_VALUE, Integer.MAX_VALUE};
        for (int d = 0; d < 2; d++) {
            List<FioValues.Split> split = d == 0 ? spec.bssplit : spec.bssplitWrite;
            splitBs[d] = new int[split.size()];
            splitCumPct[d] = new int[split.size()];
            int cum = 0;
            for (int i = 0; i < split.size(); i++) {
                splitBs[d][i] = split.get(i).bs();
                check("bssplit", splitBs[d][i], lbaSize);
                minSplit[d] = Math.min(minSplit[d], splitBs[d][i]);
                cum += (int) Math.round(split.get(i).percent() * 100);
                splitCumPct[d][i] = i == split.size() - 1 ? 10_000 : cum;
            }
        }
        if (spec.blockAlign > 0) {
            check("blockalign", spec.blockAlign, lbaSize);
        }
        int maxBs = spec.maxBlockSize();
        readAlign = spec.blockAlign > 0 ? spec.blockAlign : splitBs[0].length > 0 ? minSplit[0]
                : spec.limits.minBs(false, spec.bsRead);
        writeAlign = spec.blockAlign > 0 ? spec.blockAlign : splitBs[1].length > 0 ? minSplit[1]
                : spec.limits.minBs(true, spec.bsWrite);
        if (spec.limits.bsRange != null) {
            for (int b : spec.limits.bsRange) {
                check("bsrange", b, lbaSize);
            }
        }
        bytesPerLoop = spec.limits.bytesPerLoop(regionLength, capacity);
        if (spec.rw.random) {
            readDist = spec.distribution.create(ranges(readAlign, maxBs), readAlign, true, rng.split());
            writeDist = spec.distribution.create(ranges(writeAlign, maxBs), writeAlign, false, rng.split());
        } else {
            readDist = null;
            writeDist = null;
        }
        sequencer = spec.pattern.modified() ? new OffsetSequencer(spec, regionStart, regionLength, capacity) : null;
        fillsDevice = spec.pattern.fillDevice && regionStart + regionLength >= capacity;
    }

    private long ranges(long align, int maxBs) {
        return (regionLength - maxBs) / align + 1;
    }

    private static void check(String k, int bs, int lba) {
        if (bs % lba != 0) {
            throw new IllegalArgumentException("invalid " + k + ": " + k + "=" + bs + " is not a multiple of the LBA size " + lba);
        }
    }

    /**
     * Bytes the job issues before it ends: one pass when it fills the device (fill_device: fio ends at ENOSPC,
     * time_based or not), else {@code loops} times {@code io_size} (default: the region), unlimited when time_based.
     * trimwrite trims and writes each block: twice the bytes (fio counts both).
     */
    long byteLimit() {
        long perLoop = (spec.rw.trims && spec.rw.writes ? 2 : 1) * bytesPerLoop;
        return fillsDevice ? regionLength : spec.timeBased ? Long.MAX_VALUE : perLoop * spec.loops;
    }

    /**
     * The next I/O, or null when the job's passes are over (an rw offset modifier led beyond the region) or
     * {@code number_ios} I/Os were chosen. trimwrite: a trim, then a write of the same range (fio's set_rw_ddir).
     */
    synchronized Choice next() {
        if (spec.limits.numberIos > 0 && loopIos++ >= spec.limits.numberIos) {
            if (++loop >= spec.loops && !spec.timeBased) {
                return null;
            }
            loopIos = 1; // fio's next loop starts at the region's start
            loopBytes = 0;
            seq = 0;
            trimmed = null;
            if (sequencer != null) {
                sequencer.reset();
            }
        }
        if (trimmed != null) {
            Choice w = trimmed;
            trimmed = null;
            return w;
        }
        Choice c = choose();
        if (c != null && spec.limits.numberIos > 0 && (loopBytes += c.lengthBytes()) >= bytesPerLoop) {
            loop++; // a loop ended by its bytes: number_ios counts afresh
            loopIos = 0;
            loopBytes = 0;
        }
        if (c != null && spec.rw.trims && spec.rw.writes) {
            trimmed = new Choice(false, c.lengthBytes(), c.offsetBytes());
        }
        return c;
    }

    private Choice choose() {
        boolean read = spec.rw == JobSpec.Rw.RW || spec.rw == JobSpec.Rw.RANDRW
                ? rng.nextInt(100) < spec.rwmixread : spec.rw.reads;
        int len = chooseBs(read);
        long off;
        if (sequencer != null) {
            off = sequenced(read, len);
            if (off < 0) {
                return null;
            }
        } else if (spec.rw.random) {
            long b = (read ? readDist : writeDist).next();
            off = regionStart + b * (read ? readAlign : writeAlign);
        } else {
            long pos = seq % regionLength;
            if (pos + len > regionLength) {
                pos = 0;
                seq = 0;
            }
            seq = pos + len;
            off = regionStart + pos;
        }
        return new Choice(read, len, off, spec.rw.trims);
    }

    /** fio's end of a pass with an offset modifier: a new pass (time_based, loops left) or -1 (the job ends). */
    private long sequenced(boolean read, int len) {
        long off = sequencer.next(read ? 0 : 1, len, () -> randomOffset(read));
        if (off < 0 && (spec.timeBased && !fillsDevice || ++passes < spec.loops && !fillsDevice)) {
            sequencer.reset();
            off = sequencer.next(read ? 0 : 1, len, () -> randomOffset(read));
        }
        return off;
    }

    private long randomOffset(boolean read) {
        return regionStart + (read ? readDist : writeDist).next() * (read ? readAlign : writeAlign);
    }

    /** Another offset for the same direction and length (when the chosen block is busy; the same when none is left). */
    synchronized long another(Choice c) {
        if (sequencer != null) {
            long o = sequenced(c.read(), c.lengthBytes());
            return o < 0 ? c.offsetBytes() : o;
        }
        if (!spec.rw.random) {
            long pos = seq % regionLength;
            if (pos + c.lengthBytes() > regionLength) {
                pos = 0;
            }
            seq = pos + c.lengthBytes();
            return regionStart + pos;
        }
        long b = (c.read() ? readDist : writeDist).next();
        return regionStart + b * (c.read() ? readAlign : writeAlign);
    }

    /** Next random value for verify data seeds. */
    synchronized long nextSeed() {
        return rng.nextLong();
    }

    private int chooseBs(boolean read) {
        if (spec.limits.bsRange != null) {
            return spec.limits.length(!read, rng.nextDouble());
        }
        int d = read ? 0 : 1;
        int[] bs = splitBs[d];
        if (bs.length == 0) {
            return read ? spec.bsRead : spec.bsWrite;
        }
        int r = rng.nextInt(10_000);
        for (int i = 0; i < bs.length; i++) {
            if (r < splitCumPct[d][i]) {
                return bs[i];
            }
        }
        return bs[bs.length - 1];
    }
}
