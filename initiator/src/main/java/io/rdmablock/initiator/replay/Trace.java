package io.rdmablock.initiator.replay;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A block I/O trace in the SNIA MSN file-server format (as redistributed by huaicheng/replayer): one request per
 * line, space-separated {@code time_ms device start_sector size_sectors rw}; sectors are 512 bytes, rw 1 = read,
 * 0 = write. Offsets are folded into a device of {@code capacityBytes}: {@code offset = (sector x 512) mod capacity},
 * aligned down to {@code lbaSize}, moved back so the request ends inside the device; lengths are rounded up to
 * {@code lbaSize} and capped at {@code maxRequestBytes}.
 *
 * @param offsets folded byte offsets
 * @param lengths byte lengths
 * @param reads   true for reads
 */
public record Trace(long[] offsets, int[] lengths, boolean[] reads, int count) {

    /**
     * @throws IOException              if the file cannot be read
     * @throws IllegalArgumentException naming the line number and the field when a line is malformed
     */
    public static Trace load(Path file, long capacityBytes, int lbaSize, int maxRequestBytes, int limit)
            throws IOException {
        if (capacityBytes < maxRequestBytes) {
            throw new IllegalArgumentException("invalid capacityBytes: capacityBytes=" + capacityBytes
                    + ", min=" + maxRequestBytes + " (maxRequestBytes)");
        }
        int cap = 1 << 16;
        long[] offsets = new long[cap];
        int[] lengths = new int[cap];
        boolean[] reads = new boolean[cap];
        int n = 0;
        int lineNo = 0;
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.US_ASCII)) {
            String line;
            while ((line = r.readLine()) != null && n < limit) {
                lineNo++;
                line = line.strip();
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\\s+");
                if (f.length < 5) {
                    throw new IllegalArgumentException(file + ":" + lineNo + ": expected 5 columns "
                            + "(time_ms device start_sector size_sectors rw), got " + f.length);
                }
                long sector = parse(f[2], "start_sector", file, lineNo);
                long sectors = parse(f[3], "size_sectors", file, lineNo);
                long rw = parse(f[4], "rw", file, lineNo);
                if (sectors <= 0 || rw < 0 || rw > 1) {
                    throw new IllegalArgumentException(file + ":" + lineNo + ": invalid size_sectors=" + sectors
                            + " (min 1) or rw=" + rw + " (0 or 1)");
                }
                long len = Math.min((long) maxRequestBytes, sectors * 512);
                len = (len + lbaSize - 1) / lbaSize * lbaSize;
                long off = Math.floorMod(sector * 512, capacityBytes) / lbaSize * lbaSize;
                if (off + len > capacityBytes) {
                    off = capacityBytes - len;
                }
                if (n == cap) {
                    cap *= 2;
                    offsets = java.util.Arrays.copyOf(offsets, cap);
                    lengths = java.util.Arrays.copyOf(lengths, cap);
                    reads = java.util.Arrays.copyOf(reads, cap);
                }
                offsets[n] = off;
                lengths[n] = (int) len;
                reads[n] = rw == 1;
                n++;
            }
        }
        return new Trace(offsets, lengths, reads, n);
    }

    private static long parse(String v, String field, Path file, int lineNo) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(file + ":" + lineNo + ": invalid " + field + ": '" + v + "'");
        }
    }
}
