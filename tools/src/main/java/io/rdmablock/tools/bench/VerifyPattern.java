package io.rdmablock.tools.bench;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * fio's {@code verify_pattern} (fio HOWTO "verify_pattern", source {@code lib/pattern.c}
 * {@code parse_and_fill_pattern}, {@code paste_format}): a chunk of at most 512 bytes built from, in any order and
 * number,
 * <ul>
 *   <li>hex {@code 0x...}: the digits' bytes in the order written ({@code 0xdeadbeef} = de ad be ef; an odd digit
 *       count takes the first digit alone);</li>
 *   <li>decimal {@code 12}, {@code -12} (a 32-bit int): its bytes little-endian, as few as hold it (0 = one byte);</li>
 *   <li>a quoted string {@code "abcd"}: its bytes;</li>
 *   <li>{@code %o}: 8 bytes, little-endian, of the I/O's device offset, pasted when a block is filled.</li>
 * </ul>
 * Blanks between items are skipped. The chunk (with {@code %o} filled) is repeated over the whole buffer. The
 * default, when the option is absent, is fio's verify=pattern default: none (here: {@code 0xdeadbeef}'s bytes for
 * {@code verify=pattern}).
 */
final class VerifyPattern {
    static final int MAX_BYTES = 512;

    private final byte[] chunk;
    /** Positions in {@link #chunk} of each {@code %o} (8 bytes each). */
    private final int[] offsetAt;
    private final String text;

    private VerifyPattern(String text, byte[] chunk, int[] offsetAt) {
        this.text = text;
        this.chunk = chunk;
        this.offsetAt = offsetAt;
    }

    /**
     * Parses fio's pattern syntax.
     *
     * @throws IllegalArgumentException naming {@code verify_pattern}, the value and what is wrong
     */
    static VerifyPattern parse(String value) {
        String v = value.strip();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        java.util.List<Integer> fmts = new java.util.ArrayList<>();
        int i = 0;
        while (i < v.length()) {
            char c = v.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '"') {
                int end = v.indexOf('"', i + 1);
                if (end < 0) {
                    throw bad(value, "unterminated string at character " + (i + 1));
                }
                out.writeBytes(v.substring(i + 1, end).getBytes(StandardCharsets.UTF_8));
                i = end + 1;
            } else if (c == '%') {
                if (!v.startsWith("%o", i)) {
                    throw bad(value, "unknown format at character " + (i + 1) + " (only %o, the block offset)");
                }
                fmts.add(out.size());
                out.writeBytes(new byte[8]);
                i += 2;
            } else if ((c == '0') && i + 1 < v.length() && (v.charAt(i + 1) == 'x' || v.charAt(i + 1) == 'X')) {
                int j = i + 2;
                while (j < v.length() && Character.digit(v.charAt(j), 16) >= 0
                        && !(v.charAt(j) == '0' && j + 1 < v.length() && (v.charAt(j + 1) == 'x' || v.charAt(j + 1) == 'X'))) {
                    j++;
                }
                String hex = v.substring(i + 2, j);
                if (hex.isEmpty()) {
                    throw bad(value, "no hex digits after 0x at character " + (i + 1));
                }
                int k = 0;
                if (hex.length() % 2 == 1) {
                    out.write(Character.digit(hex.charAt(0), 16));
                    k = 1;
                }
                for (; k < hex.length(); k += 2) {
                    out.write(Integer.parseInt(hex.substring(k, k + 2), 16));
                }
                i = j;
            } else if (c == '-' || Character.isDigit(c)) {
                int j = i + 1;
                while (j < v.length() && Character.isDigit(v.charAt(j))
                        && !(v.charAt(j) == '0' && j + 1 < v.length() && (v.charAt(j + 1) == 'x' || v.charAt(j + 1) == 'X'))) {
                    j++;
                }
                long n;
                try {
                    n = Long.parseLong(v.substring(i, j));
                } catch (NumberFormatException e) {
                    throw bad(value, "bad number at character " + (i + 1));
                }
                if (n > Integer.MAX_VALUE || n < Integer.MIN_VALUE) {
                    throw bad(value, "decimal " + n + " is outside a 32-bit int (use 0x... for wider patterns)");
                }
                int x = (int) n;
                if (x == 0) {
                    out.write(0);
                }
                while (x != 0) {
                    out.write(x & 0xff);
                    x >>>= 8;
                }
                i = j;
            } else {
                throw bad(value, "unexpected '" + c + "' at character " + (i + 1)
                        + " (allowed: 0x hex, decimal, \"string\", %o)");
            }
        }
        if (out.size() == 0) {
            throw bad(value, "empty pattern");
        }
        if (out.size() > MAX_BYTES) {
            throw bad(value, out.size() + " bytes, max=" + MAX_BYTES);
        }
        return new VerifyPattern(value, out.toByteArray(), fmts.stream().mapToInt(Integer::intValue).toArray());
    }

    private static IllegalArgumentException bad(String value, String why) {
        return new IllegalArgumentException("invalid verify_pattern: '" + value + "': " + why);
    }

    /** The pattern's chunk length in bytes. */
    int length() {
        return chunk.length;
    }

    /** The chunk for an I/O at {@code ioOffset} (device byte offset): {@code %o} filled in. */
    byte[] chunk(long ioOffset) {
        byte[] c = chunk.clone();
        for (int at : offsetAt) {
            for (int b = 0; b < 8; b++) {
                c[at + b] = (byte) (ioOffset >>> (8 * b));
            }
        }
        return c;
    }

    /**
     * Fills {@code seg} with the chunk for {@code ioOffset} repeated, starting at chunk byte {@code phase}
     * (the position in the I/O buffer where {@code seg} starts: fio repeats the chunk over the whole buffer).
     */
    void fill(MemorySegment seg, long ioOffset, long phase) {
        byte[] c = chunk(ioOffset);
        long n = seg.byteSize();
        for (long i = 0; i < n; i++) {
            seg.set(ValueLayout.JAVA_BYTE, i, c[(int) ((phase + i) % c.length)]);
        }
    }

    @Override
    public String toString() {
        return text;
    }
}
