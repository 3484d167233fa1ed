package io.rdmablock.node.store;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the filesystem of the data directory supports, found once at open with a probe file:
 * {@code O_DIRECT} and its alignment ({@code statx(2)} STATX_DIOALIGN, else 4096), {@code FALLOC_FL_PUNCH_HOLE} and
 * {@code FALLOC_FL_ZERO_RANGE} ({@code fallocate(2)}).
 *
 * @param directIo       O_DIRECT opens succeed (false on e.g. tmpfs: data files are then opened buffered)
 * @param dioOffsetAlign required alignment of file offsets and lengths for O_DIRECT, bytes
 * @param dioMemAlign    required alignment of buffer addresses for O_DIRECT, bytes
 * @param punchHole      punch hole works, so trimmed ranges read zero
 * @param zeroRange      zero range works
 */
record FsProbe(boolean directIo, int dioOffsetAlign, int dioMemAlign, boolean punchHole, boolean zeroRange) {

    private static final Logger LOG = LoggerFactory.getLogger(FsProbe.class);
    static final String PROBE_NAME = ".fsprobe.tmp";

    static FsProbe run(Path dir, int alignOverride) {
        Path probe = dir.resolve(PROBE_NAME);
        try {
            Files.deleteIfExists(probe);
        } catch (IOException e) {
            throw new StoreException("delete probe file failed: path=" + probe + ": " + e, e);
        }
        Syscalls.createSparseFile(probe, 1 << 20);
        try {
            boolean direct = true;
            try {
                Syscalls.close(Syscalls.open(probe, true));
            } catch (StoreException e) {
                LOG.warn("O_DIRECT unsupported on {} ({}); data files are opened buffered", dir, e.getMessage());
                direct = false;
            }
            int[] dio = Syscalls.dioAlign(probe);
            int off = dio == null ? 4096 : dio[1];
            int mem = dio == null ? 4096 : Math.max(dio[0], 1);
            if (alignOverride != 0) {
                off = alignOverride;
                mem = Math.max(mem, alignOverride);
            }
            int fd = Syscalls.open(probe, false);
            boolean punch;
            boolean zero;
            try {
                MemorySegment err = Syscalls.threadErrState();
                punch = Syscalls.fallocateRaw(err, fd, Syscalls.FALLOC_FL_PUNCH_HOLE | Syscalls.FALLOC_FL_KEEP_SIZE,
                        0, 4096) == 0;
                zero = Syscalls.fallocateRaw(err, fd, Syscalls.FALLOC_FL_ZERO_RANGE | Syscalls.FALLOC_FL_KEEP_SIZE,
                        4096, 4096) == 0;
            } finally {
                Syscalls.close(fd);
            }
            return new FsProbe(direct, off, mem, punch, zero);
        } finally {
            try {
                Files.deleteIfExists(probe);
            } catch (IOException e) {
                LOG.warn("delete probe file failed: path={}: {}", probe, e.toString());
            }
        }
    }
}
