package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The data written without verify (buffer_pattern, buffer_compress_*, zero_buffers, scramble_buffers,
 * refill_buffers), against the file fio 3.33 writes for the same job with {@code --ioengine=psync}.
 */
@Timeout(120)
class BufferContentTest {
    @TempDir
    Path dir;

    /** Writes 64 KiB sequentially with {@code kv} through the bench and through fio; returns {ours, fio's}. */
    byte[][] both(String... kv) throws Exception {
        Path ours = dir.resolve("ours.img");
        Files.deleteIfExists(ours);
        FileBlockDevice.createFile(ours, 64 * 1024);
        Map<String, String> m = new LinkedHashMap<>(Map.of("rw", "write", "bs", "4k", "size", "64k"));
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        BenchRun.Outcome o = BenchRun.run(new ArrayList<>(List.of(JobSpec.of("w", m))), null,
                () -> new FileBlockDevice(ours, 512, false, 8), null, BenchRun.Progress.none(), dir);
        assertEquals(0, o.entries().getFirst().error());
        Path theirs = dir.resolve("fio.img");
        Files.deleteIfExists(theirs);
        List<String> args = new ArrayList<>(List.of("--name=w", "--ioengine=psync", "--filename=" + theirs,
                "--rw=write", "--bs=4k", "--size=64k", "--output=/dev/null"));
        for (int i = 0; i < kv.length; i += 2) {
            args.add("--" + kv[i] + "=" + kv[i + 1]);
        }
        LocalFio.run(dir, args);
        return new byte[][] {Files.readAllBytes(ours), Files.readAllBytes(theirs)};
    }

    @Test
    void shouldWriteTheBufferPatternByteForByteAsFio() throws Exception {
        for (String p : List.of("0xdeadbeef", "\"abc\"0x01", "305419896")) {
            byte[][] b = both("buffer_pattern", p, "scramble_buffers", "0");
            assertArrayEquals(b[1], b[0], "buffer_pattern=" + p);
        }
        byte[][] z = both("zero_buffers", "1");
        assertArrayEquals(z[1], z[0], "zero_buffers");
        assertArrayEquals(new byte[64 * 1024], z[0]);
    }

    /** Whether every 512-byte sector holds its own device offset at one of its 8 64-byte lines (fio's scramble). */
    static boolean scrambled(byte[] f) {
        ByteBuffer b = ByteBuffer.wrap(f).order(ByteOrder.LITTLE_ENDIAN);
        for (int s = 0; s < f.length; s += 512) {
            boolean found = false;
            for (int line = 0; line < 8 && !found; line++) {
                found = b.getLong(s + line * 64) == s;
            }
            if (!found && s > 0) { // offset 0 is indistinguishable from zeros
                return false;
            }
        }
        return true;
    }

    @Test
    void shouldScrambleEverySectorAsFioUnlessTurnedOff() throws Exception {
        byte[][] b = both();
        assertTrue(scrambled(b[1]), "fio scrambles by default");
        assertTrue(scrambled(b[0]), "ours scrambles by default");
        for (String[] off : List.of(new String[] {"scramble_buffers", "0"}, new String[] {"buffer_pattern", "0x5a"},
                new String[] {"zero_buffers", "1"})) {
            b = both(off);
            assertFalse(scrambled(b[1]), "fio with " + off[0]);
            assertFalse(scrambled(b[0]), "ours with " + off[0]);
        }
        b = both("buffer_pattern", "0x5a", "scramble_buffers", "1");
        assertTrue(scrambled(b[1]), "fio: scramble_buffers=1 after buffer_pattern");
        assertTrue(scrambled(b[0]), "ours: scramble_buffers=1 after buffer_pattern");
    }

    @Test
    void shouldLayOutCompressibleChunksAsFio() throws Exception {
        for (String[] c : List.of(new String[] {"50", "512"}, new String[] {"25", "1k"}, new String[] {"90", "4k"})) {
            byte[][] b = both("buffer_compress_percentage", c[0], "buffer_compress_chunk", c[1], "buffer_pattern",
                    "0xa5");
            // the same bytes hold the pattern in both files; elsewhere random data (rarely 0xa5 by chance)
            int same = 0;
            int patternBytes = 0;
            for (int i = 0; i < b[0].length; i++) {
                boolean o = b[0][i] == (byte) 0xa5;
                boolean f = b[1][i] == (byte) 0xa5;
                same += o == f ? 1 : 0;
                patternBytes += f ? 1 : 0;
            }
            assertTrue(same > b[0].length - b[0].length / 100, "compress " + c[0] + "% chunk " + c[1] + ": only "
                    + same + " bytes agree");
            int pct = Integer.parseInt(c[0]);
            assertEquals(pct, 100.0 * patternBytes / b[1].length, 2.0, "fio's own share");
        }
    }

    @Test
    void shouldRefuseBadValuesNamingOptionJobAndBounds() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JobSpec.of("j", Map.of("buffer_compress_percentage", "101")));
        assertEquals("invalid buffer_compress_percentage: buffer_compress_percentage=101, min=0, max=100 (job 'j')",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> JobSpec.of("k", Map.of("buffer_compress_chunk", "8k", "bs", "4k")));
        assertEquals("invalid buffer_compress_chunk: 8192 in job 'k': min=1, max=bs=4096", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> JobSpec.of("p", Map.of("cpus_allowed", "a-b")));
        assertEquals("invalid cpus_allowed: 'a-b' in job 'p', allowed=a CPU list, e.g. 0-3,6", e.getMessage());
        JobSpec ok = JobSpec.of("q", Map.of("numa_mem_policy", "bind:0", "cpumask", "0x3"));
        assertTrue(ok.warnings.stream().anyMatch(w -> w.startsWith("numa_mem_policy=bind:0 not applied")), ok.warnings.toString());
        assertTrue(ok.warnings.stream().anyMatch(w -> w.startsWith("cpumask=0x3 not applied")), ok.warnings.toString());
    }
}
