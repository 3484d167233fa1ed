package io.rdmablock.tools.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * What a verify job knows about its region: for each block of {@code blockBytes}, the generation of the last write
 * the device acknowledged (0 = never written by a job that kept state). Every write carries a new generation in its
 * block header ({@link BlockVerifier}); a read that finds an older generation than the one recorded here is a lost
 * write. The idea of fio's verify state ({@code verify_state_save}/{@code verify_state_load}, fio's
 * {@code verify-state.c}), kept per block instead of as the last few completions, so it survives a node restart or a
 * failover between a write job and a later read job.
 *
 * <p>File layout (little endian), written to a temporary file, fsynced and renamed:
 * <pre>
 *  0  u32 magic 0x53564252 ("RBVS")     4  u32 version 1
 *  8  u32 block size in bytes          12  u32 reserved 0
 * 16  u64 region start (device offset) 24  u64 blocks
 * 32  u64 next generation              40  u32[blocks] last acknowledged generation per block
 * </pre>
 * At most {@link Integer#MAX_VALUE} - 8 blocks (4 bytes each in memory). Thread-safe.
 */
final class BlockVerifyState {
    static final int MAGIC = 0x53564252;
    static final int HEADER_BYTES = 40;
    static final long MAX_BLOCKS = Integer.MAX_VALUE - 8;

    final int blockBytes;
    final long regionStart;
    final long blocks;
    private final AtomicIntegerArray acked;
    private final AtomicInteger nextGeneration;

    BlockVerifyState(int blockBytes, long regionStart, long blocks) {
        if (blocks < 1 || blocks > MAX_BLOCKS) {
            throw new IllegalArgumentException("invalid verify region: blocks=" + blocks + ", min=1, max=" + MAX_BLOCKS);
        }
        this.blockBytes = blockBytes;
        this.regionStart = regionStart;
        this.blocks = blocks;
        this.acked = new AtomicIntegerArray((int) blocks);
        this.nextGeneration = new AtomicInteger(1);
    }

    /** A new generation for a write about to be issued; generations grow across saved and loaded runs. */
    int newGeneration() {
        int g = nextGeneration.getAndIncrement();
        if (g <= 0) {
            throw new IllegalStateException("verify generations exhausted: 2^31 writes");
        }
        return g;
    }

    /** Records that the write of {@code generation} to {@code block} was acknowledged. */
    void acknowledged(long block, int generation) {
        acked.accumulateAndGet((int) block, generation, Math::max);
    }

    /** The generation of the last acknowledged write, 0 if none. */
    int lastAcknowledged(long block) {
        return acked.get((int) block);
    }

    /** Blocks that were never written (generation 0). */
    long neverWritten() {
        long n = 0;
        for (int i = 0; i < blocks; i++) {
            if (acked.get(i) == 0) {
                n++;
            }
        }
        return n;
    }

    /** Saves atomically (temp file, fsync, rename). @throws IOException naming the file */
    void save(Path file) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            h.putInt(MAGIC).putInt(1).putInt(blockBytes).putInt(0).putLong(regionStart).putLong(blocks)
                    .putLong(nextGeneration.get()).flip();
            ch.write(h);
            ByteBuffer b = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < blocks; i++) {
                if (!b.hasRemaining()) {
                    ch.write(b.flip());
                    b.clear();
                }
                b.putInt(acked.get(i));
            }
            ch.write(b.flip());
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Loads a state saved for the same region.
     *
     * @throws IllegalArgumentException when the file is missing, is not a verify state, or describes another region
     *                                  (naming the field, the file's value and the job's)
     */
    static BlockVerifyState load(Path file, int blockBytes, long regionStart, long blocks) throws IOException {
        byte[] all;
        try {
            all = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("invalid verify_state_load: " + file + ": no such file (saved by a job"
                    + " with verify_state_save=1)");
        }
        ByteBuffer b = ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN);
        if (all.length < HEADER_BYTES || b.getInt(0) != MAGIC || b.getInt(4) != 1) {
            throw new IllegalArgumentException("invalid verify_state_load: " + file + " is not a verify state file");
        }
        check(file, "block size", b.getInt(8), blockBytes);
        check(file, "region start", b.getLong(16), regionStart);
        check(file, "blocks", b.getLong(24), blocks);
        if (all.length != HEADER_BYTES + 4 * blocks) {
            throw new IllegalArgumentException("invalid verify_state_load: " + file + " is truncated: "
                    + all.length + " bytes, want " + (HEADER_BYTES + 4 * blocks));
        }
        BlockVerifyState s = new BlockVerifyState(blockBytes, regionStart, blocks);
        s.nextGeneration.set((int) b.getLong(32));
        b.position(HEADER_BYTES);
        for (int i = 0; i < blocks; i++) {
            s.acked.set(i, b.getInt());
        }
        return s;
    }

    private static void check(Path file, String field, long got, long want) {
        if (got != want) {
            throw new IllegalArgumentException("invalid verify_state_load: " + file + ": " + field + "=" + got
                    + " in the file, the job has " + field + "=" + want);
        }
    }

    /**
     * Checks a read of verify block {@code block} (its data at {@code offset}) against the last acknowledged write
     * of it in {@code state}: null when it verified, "" when it was never written (not checked: counted by
     * {@link #neverWritten}), else the failure (a lost write: an older generation than the acknowledged one).
     */
    static String check(BlockVerifyState state, long block, JobSpec spec, boolean stateLoaded, int verifyThread,
                        BlockVerifier verifier, java.lang.foreign.MemorySegment data, long offset) {
        int acked = state.lastAcknowledged(block);
        if (acked <= 0 && (spec.rw.writes || stateLoaded)) {
            return "";
        }
        String bad = verifier.check(data, offset, spec.rw.writes && !stateLoaded ? verifyThread : -1);
        if (bad == null && spec.verify != JobSpec.Verify.PATTERN && verifier.lastGeneration() < acked) {
            bad = "lost write at offset " + offset + ": block holds generation " + verifier.lastGeneration()
                    + ", the last acknowledged write was generation " + acked;
        }
        if (bad != null && acked > 0 && !bad.startsWith("lost write")) {
            bad += " (the last acknowledged write there was generation " + acked + ")";
        }
        return bad;
    }

    /**
     * The verify state file of job {@code jobName} in {@code dir}, shared by its clones: like fio's
     * {@code <type>-<jobname>-<index>-verify.state} with index 0.
     */
    static java.nio.file.Path file(java.nio.file.Path dir, String jobName) {
        return dir.resolve("local-" + jobName.replaceAll("[^A-Za-z0-9._-]", "_") + "-0-verify.state");
    }
}
