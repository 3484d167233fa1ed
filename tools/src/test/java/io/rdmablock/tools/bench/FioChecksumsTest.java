package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * verify= checksum types beyond crc32c/md5: each value against the blocks fio 3.33 wrote (its verify header, 40
 * bytes in 3.33, then the type's {@code vhdr_*} field, then the checksummed data), the CRC tables against entries of
 * fio's source, and each type end to end through the bench (write, read back, a flipped byte caught).
 */
@Timeout(120)
class FioChecksumsTest {
    @TempDir
    Path dir;

    /** fio 3.33's sizeof(struct vhdr_*) (verify.h): the data checksummed starts 40 + this into the unit. */
    static int fioVhdr(String type) {
        return switch (type) {
            case "sha256" -> 64;
            case "sha512" -> 128;
            default -> VerifyChecksum.length(VerifyChecksum.parse(type));
        };
    }

    @Test
    void shouldComputeTheChecksumFioStoredInEachBlock() throws Exception {
        LocalFio.assumeInstalled();
        List<String> types = List.of("md5", "crc64", "crc32", "crc32c", "crc16", "crc7", "sha1", "sha3-224", "sha3-256",
                "sha3-384", "sha3-512", "xxhash");
        for (String t : types) {
            Path f = dir.resolve(t + ".img");
            LocalFio.run(dir, List.of("--name=w", "--ioengine=psync", "--filename=" + f, "--rw=randwrite",
                    "--bs=4k", "--size=32k", "--verify=" + t, "--do_verify=1", "--verify_state_save=0",
                    "--output=/dev/null"));
            byte[] all = Files.readAllBytes(f);
            VerifyChecksum sum = new VerifyChecksum(VerifyChecksum.parse(t));
            int n = VerifyChecksum.length(VerifyChecksum.parse(t));
            for (int off = 0; off < all.length; off += 4096) {
                ByteBuffer h = ByteBuffer.wrap(all, off, 40).order(ByteOrder.LITTLE_ENDIAN);
                assertEquals(0xacca, h.getShort(off) & 0xffff, t + ": fio's magic at " + off);
                int len = h.getInt(off + 4);
                assertEquals(4096, len);
                int data = off + 40 + fioVhdr(t);
                byte[] mine = sum.compute(all, data, off + len - data);
                byte[] theirs = Arrays.copyOfRange(all, off + 40, off + 40 + n);
                assertArrayEquals(theirs, mine, t + " of the block fio wrote at " + off);
            }
        }
    }

    @Test
    void shouldBuildFiosCrcTables() {
        // crc/crc64.c crctab64[1], [128], [255]; crc/crc32.c crctab[1]; crc/crc16.c [1], [255]; crc/crc7.c [1], [8], [16]
        assertEquals(0x7ad870c830358979L, FioChecksums.tableEntry(64, 1));
        assertEquals(0x95ac9329ac4bc9b5L, FioChecksums.tableEntry(64, 128));
        assertEquals(0x04c11db7L, FioChecksums.tableEntry(32, 1));
        assertEquals(0xc0c1, FioChecksums.tableEntry(16, 1));
        assertEquals(0x4040, FioChecksums.tableEntry(16, 255));
        assertEquals(0x09, FioChecksums.tableEntry(7, 1));
        assertEquals(0x48, FioChecksums.tableEntry(7, 8));
        assertEquals(0x19, FioChecksums.tableEntry(7, 16));
        // XXH32 reference vectors (xxHash's own): "" seed 0 = 0x02cc5d05, "abc" seed 0 = 0x32d153ff
        assertEquals(0x02cc5d05, FioChecksums.xxh32(new byte[0], 0, 0, 0));
        byte[] abc = "abc".getBytes(StandardCharsets.US_ASCII);
        assertEquals(0x32d153ff, FioChecksums.xxh32(abc, 0, 3, 0));
    }

    @Test
    void shouldVerifyEveryTypeThroughTheBenchAndCatchAFlippedByte() throws Exception {
        Path file = dir.resolve("vol.img");
        FileBlockDevice.createFile(file, 1 << 20);
        for (String t : VerifyChecksum.ALLOWED.split("\\|")) {
            JobSpec.Verify kind = VerifyChecksum.parse(t);
            if (kind == JobSpec.Verify.NONE || kind == JobSpec.Verify.META) {
                continue; // meta without verify_pattern checks the header only, as fio's
            }
            Map<String, String> m = new LinkedHashMap<>();
            m.put("rw", "write");
            m.put("bs", "4k");
            m.put("size", "64k");
            m.put("verify", t);
            m.put("verify_interval", "1k");
            JobSpec s = JobSpec.of("w-" + t, m);
            BenchRun.Outcome o = BenchRun.run(new ArrayList<>(List.of(s)), null,
                    () -> new FileBlockDevice(file, 512, false, 8), null, BenchRun.Progress.none(), dir);
            assertEquals(0, o.entries().getFirst().error(), t + ": " + o.entries().getFirst().messages());
            BlockVerifier v = new BlockVerifier(s, 1);
            try (Arena a = Arena.ofConfined()) {
                MemorySegment b = a.allocate(4096);
                v.fill(b, 8192, 5, 2);
                assertNull(v.check(b, 8192, 1), t);
                int at = 1024 + 1000; // data of the second interval
                b.set(ValueLayout.JAVA_BYTE, at, (byte) (b.get(ValueLayout.JAVA_BYTE, at) ^ 1));
                String bad = v.check(b, 8192, 1);
                assertNotNull(bad, t + ": a flipped byte went unnoticed");
                if (kind != JobSpec.Verify.META && kind != JobSpec.Verify.PATTERN) {
                    assertTrue(bad.startsWith("bad " + t.replace("-intel", "") + " checksum at offset 9216"), bad);
                }
            }
        }
    }

    @Test
    void shouldRefuseAnUnknownTypeAndASmallIntervalNamingJobAndBounds() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JobSpec.of("j", Map.of("verify", "sha384")));
        assertTrue(e.getMessage().startsWith("invalid verify: 'sha384' in job 'j', allowed=md5|crc64"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> JobSpec.of("k", Map.of("verify", "sha512", "verify_interval", "64")));
        assertTrue(e.getMessage().contains("verify_interval: 64 in job 'k': min=112, max=bs=4096"), e.getMessage());
    }
}
