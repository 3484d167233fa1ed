package io.rdmablock.tools.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;

/**
 * The data a job writes when it does not verify, with fio's options (fio(1) "Buffers and memory"; io_u.c
 * {@code fill_io_buffer}, {@code small_content_scramble}, lib/rand.c {@code __fill_random_buf_percentage} of fio
 * 3.33). A buffer is filled before its first write and again when a read used it since (as fio):
 * <ul>
 * <li>default: pseudo-random bytes (xorshift64 per clone and I/O unit: the layout is fio's, the bytes are not).</li>
 * <li>{@code zero_buffers}: zeros. {@code buffer_pattern}: the pattern repeated (fio's syntax as
 *     {@code verify_pattern}: hex, decimal, "string"), byte for byte fio's; as in fio it turns scrambling off
 *     (a later {@code scramble_buffers=1} turns it on again).</li>
 * <li>{@code buffer_compress_percentage=P} (0..100) with {@code buffer_compress_chunk=C} (default 512; 1..bs):
 *     each C bytes are (100-P)% random followed by P% of the pattern (zeros without one), fio's layout, so the
 *     data compresses by about P%.</li>
 * <li>{@code refill_buffers}: refilled before every write (implied by a compress percentage below 100 unless set;
 *     100 means {@code zero_buffers}, as in fio's init.c). Otherwise {@code scramble_buffers=1} (the default; not
 *     with compression, nor with an explicit {@code zero_buffers}) changes each 512-byte sector of every write: the sector's device offset at 64-byte
 *     line {@code (time ^ offset) & 7}, the time (seconds, nanoseconds) in bytes 48..63.</li>
 * </ul>
 * Bad values fail before any I/O naming option, value, job and bounds. One instance per I/O unit: not thread-safe.
 */
final class BufferContent {
    static final Set<String> OPTIONS = Set.of("buffer_pattern", "buffer_compress_percentage", "compress_percentage",
            "buffer_compress_chunk", "compress_chunk", "refill_buffers", "scramble_buffers", "zero_buffers");
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    /** The job's options (in {@link JobSpec#buffers}). */
    static final class Spec {
        VerifyPattern pattern;
        int compressPercentage;
        int compressChunk = 512;
        boolean refill;
        Boolean refillSet;
        boolean scramble = true;
        Boolean scrambleSet;
        boolean zero;

        void set(JobSpec j, String k, String v) {
            try {
                switch (k) {
                    case "buffer_pattern" -> { // options.c str_buffer_pattern_cb
                        pattern = VerifyPattern.parse(v);
                        scramble = false;
                        zero = false;
                    }
                    case "buffer_compress_percentage", "compress_percentage" ->
                            compressPercentage = FioValues.integer(k, v, 0, 100);
                    case "buffer_compress_chunk", "compress_chunk" ->
                            compressChunk = (int) Math.min(Integer.MAX_VALUE, FioValues.size(k, v));
                    case "refill_buffers" -> refill = refillSet = FioValues.bool(k, v);
                    case "scramble_buffers" -> scramble = scrambleSet = FioValues.bool(k, v);
                    case "zero_buffers" -> zero = FioValues.bool(k, v);
                    default -> throw new IllegalStateException("unhandled option " + k);
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(e.getMessage() + " (job '" + j.name + "')", e);
            }
        }

        /** Checks the chunk against the block size, before any I/O; resolves fio's implied settings (init.c). */
        void validate(JobSpec j) {
            if (compressPercentage == 100) { // fio: zero_buffers, no compression (a buffer_pattern still wins)
                zero = true;
                compressPercentage = 0;
            } else if (compressPercentage > 0 && refillSet == null) {
                refill = true;
            }
            if (pattern != null && refillSet == null && (compressPercentage > 0 || j.rw.reads)) {
                refill = true; // a read would spoil the pattern (str_buffer_pattern_cb)
            }
            if (zero && scrambleSet == null && j.options.containsKey("zero_buffers")) {
                scramble = false; // fio scrambles unless zero_buffers was asked for explicitly
            }
            if (compressChunk < 1 || compressChunk > j.maxBlockSize()) {
                throw new IllegalArgumentException("invalid buffer_compress_chunk: " + compressChunk + " in job '"
                        + j.name + "': min=1, max=bs=" + j.maxBlockSize());
            }
        }
    }

    private final Spec spec;
    private long x;
    private boolean filled;

    BufferContent(Spec spec, long seed) {
        this.spec = spec;
        this.x = seed | 1;
    }

    /** Before an I/O of {@code buf}: a read spoils the contents, a write gets fio's data; {@code offset} in bytes. */
    void prepare(MemorySegment buf, long offset, boolean read) {
        if (read) {
            filled = false;
            return;
        }
        if (!filled || spec.refill) {
            fill(buf, offset);
            filled = true;
        }
        if (!spec.refill && spec.scramble && spec.compressPercentage == 0) { // io_u.c get_io_u: do_scramble
            scramble(buf, offset, System.currentTimeMillis() * 1_000_000 + System.nanoTime() % 1_000_000);
        }
    }

    void fill(MemorySegment buf, long offset) {
        long n = buf.byteSize();
        if (spec.compressPercentage > 0) {
            int seg = (int) Math.min(spec.compressChunk, n);
            for (long p = 0; p < n; ) { // lib/rand.c __fill_random_buf_percentage
                long r = Math.min((long) seg * (100 - spec.compressPercentage) / 100, n - p);
                random(buf.asSlice(p, r));
                p += r;
                if (p >= n) {
                    break;
                }
                long c = seg - r;
                if (c > n - p || n - p - c <= 8) {
                    c = n - p;
                }
                fixed(buf.asSlice(p, c), offset);
                p += c;
            }
        } else if (spec.pattern != null || spec.zero) {
            fixed(buf, offset);
        } else {
            random(buf);
        }
    }

    private void fixed(MemorySegment s, long offset) {
        if (spec.pattern != null) {
            spec.pattern.fill(s, offset, 0);
        } else {
            s.fill((byte) 0);
        }
    }

    private void random(MemorySegment s) {
        long n = s.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            s.set(LONG, i, x);
        }
        for (; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (x >>> (8 * (i & 7))));
        }
    }

    /** io_u.c small_content_scramble: per 512-byte sector, its offset at line (time ^ offset) & 7, the time at 48. */
    static void scramble(MemorySegment buf, long offset, long timeNs) {
        long sec = timeNs / 1_000_000_000L;
        long nsec = timeNs % 1_000_000_000L;
        int line = (int) ((nsec ^ offset) & 7);
        for (long p = 0; p + 512 <= buf.byteSize(); p += 512) {
            buf.set(LONG, p + ((long) line << 6), offset + p);
            buf.set(LONG, p + 48, sec);
            buf.set(LONG, p + 56, nsec);
        }
    }
}
