package io.rdmablock.tools.replay;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A block I/O trace as written: per request its time (ns from the trace's origin), byte offset, byte length,
 * direction and line number. Loading never aligns or caps a request; {@link #foldedInto} maps offsets beyond a
 * smaller volume into it (modulo the capacity, keeping the offset modulo 4096) and counts the requests it moved, so
 * the caller can say so.
 *
 * @param skipped lines the format skips (headers, blkparse events of other actions or without data), counted
 * @param folded  requests whose offset {@link #foldedInto} changed (0 for a loaded trace)
 */
public record Trace(TraceFormat format, long[] timesNs, long[] offsets, int[] lengths, boolean[] reads, int[] lines,
                    int count, long skipped, int folded) {

    /** Largest request accepted, bytes: a request beyond this is refused with its line (the device splits up to it). */
    public static final int MAX_REQUEST_BYTES = 64 << 20;

    /**
     * Reads at most {@code limit} requests.
     *
     * @param format the format, or null to detect it from the first request line ({@link TraceFormat#detect})
     * @throws IllegalArgumentException when the file does not exist, has no requests, or a line is malformed (naming
     *                                  the file, the line number and the field)
     * @throws IOException              if the file cannot be read
     */
    public static Trace load(Path file, TraceFormat format, int limit) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("invalid trace: " + file + ": no such file");
        }
        int cap = 1 << 16;
        long[] times = new long[cap];
        long[] offsets = new long[cap];
        int[] lengths = new int[cap];
        boolean[] reads = new boolean[cap];
        int[] lines = new int[cap];
        char[] actions = new char[cap];
        int n = 0;
        int lineNo = 0;
        long skipped = 0;
        TraceFormat f = format;
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.ISO_8859_1)) {
            String line;
            while ((line = r.readLine()) != null && n < limit) {
                lineNo++;
                String s = line.strip();
                if (s.isEmpty() || s.startsWith("#")) {
                    continue;
                }
                if (f == null) {
                    f = TraceFormat.detect(s);
                }
                TraceFormat.Line req;
                try {
                    req = f.parse(s);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("invalid trace: " + file + ":" + lineNo + " (" + f.cliName()
                            + " format): " + e.getMessage());
                }
                if (req == null) {
                    skipped++;
                    continue;
                }
                if (req.lengthBytes() > MAX_REQUEST_BYTES) {
                    throw new IllegalArgumentException("invalid trace: " + file + ":" + lineNo + ": request of "
                            + req.lengthBytes() + " bytes, max=" + MAX_REQUEST_BYTES);
                }
                if (n == cap) {
                    cap *= 2;
                    times = Arrays.copyOf(times, cap);
                    offsets = Arrays.copyOf(offsets, cap);
                    lengths = Arrays.copyOf(lengths, cap);
                    reads = Arrays.copyOf(reads, cap);
                    lines = Arrays.copyOf(lines, cap);
                    actions = Arrays.copyOf(actions, cap);
                }
                times[n] = req.timeNs();
                offsets[n] = req.offsetBytes();
                lengths[n] = (int) req.lengthBytes();
                reads[n] = req.read();
                lines[n] = lineNo;
                actions[n] = req.action();
                n++;
            }
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("invalid trace: " + file + ": no such file");
        }
        if (n == 0) {
            throw new IllegalArgumentException("invalid trace: " + file + " has no requests"
                    + (f == null ? "" : " in " + f.cliName() + " format"));
        }
        Trace t = new Trace(f, times, offsets, lengths, reads, lines, n, skipped, 0);
        return f == TraceFormat.BLKPARSE ? t.oneAction(actions) : t;
    }

    /** blkparse: keeps the events of one action (Q, else D, else C), counting the others as skipped. */
    private Trace oneAction(char[] actions) {
        char keep = 0;
        for (char a : new char[] {'Q', 'D', 'C'}) {
            for (int i = 0; i < count && keep == 0; i++) {
                if (actions[i] == a) {
                    keep = a;
                }
            }
        }
        int m = 0;
        long[] t = new long[count];
        long[] o = new long[count];
        int[] l = new int[count];
        boolean[] r = new boolean[count];
        int[] ln = new int[count];
        for (int i = 0; i < count; i++) {
            if (actions[i] == keep) {
                t[m] = timesNs[i];
                o[m] = offsets[i];
                l[m] = lengths[i];
                r[m] = reads[i];
                ln[m] = lines[i];
                m++;
            }
        }
        if (m == 0) {
            throw new IllegalArgumentException("invalid trace: no Q, D or C events with data");
        }
        return new Trace(format, t, o, l, r, ln, m, skipped + count - m, 0);
    }

    /**
     * The trace on a volume of {@code capacityBytes}: a request that does not fit gets offset
     * {@code offset mod capacity}, moved back by whole 4096-byte steps until it ends inside the volume (so its
     * alignment is unchanged); lengths and directions are unchanged.
     *
     * @throws IllegalArgumentException when a request is longer than the volume (naming its line)
     */
    public Trace foldedInto(long capacityBytes) {
        long[] o = offsets.clone();
        int moved = 0;
        for (int i = 0; i < count; i++) {
            if (lengths[i] > capacityBytes - 4096) {
                throw new IllegalArgumentException("invalid trace: line " + lines[i] + ": request of " + lengths[i]
                        + " bytes does not fit the volume of " + capacityBytes + " bytes");
            }
            if (o[i] + lengths[i] <= capacityBytes) {
                continue;
            }
            long off = Math.floorMod(o[i], capacityBytes);
            if (off + lengths[i] > capacityBytes) {
                off -= (off + lengths[i] - capacityBytes + 4095) / 4096 * 4096;
            }
            o[i] = off;
            moved++;
        }
        return new Trace(format, timesNs, o, lengths, reads, lines, count, skipped, folded + moved);
    }

    /** Requests whose offset or length is not a multiple of {@code lbaSize}. */
    public int misaligned(int lbaSize) {
        int n = 0;
        for (int i = 0; i < count; i++) {
            if (offsets[i] % lbaSize != 0 || lengths[i] % lbaSize != 0) {
                n++;
            }
        }
        return n;
    }

    /** Index of the first request not aligned to {@code lbaSize}, or -1. */
    public int firstMisaligned(int lbaSize) {
        for (int i = 0; i < count; i++) {
            if (offsets[i] % lbaSize != 0 || lengths[i] % lbaSize != 0) {
                return i;
            }
        }
        return -1;
    }

    /** The largest request length in bytes. */
    public int maxLength() {
        int m = 0;
        for (int i = 0; i < count; i++) {
            m = Math.max(m, lengths[i]);
        }
        return m;
    }
}
