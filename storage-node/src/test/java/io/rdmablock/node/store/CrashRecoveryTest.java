package io.rdmablock.node.store;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * C10 / C15: data acknowledged by a FLUSH survives {@code kill -9} of the process (and a graceful stop); writes
 * never flushed may be lost but are never torn inside a block. The writer is a child JVM ({@link CrashChild}).
 */
class CrashRecoveryTest {

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldKeepFlushedDataAndNeverTearBlocksAfterKill9(IoBackend backend) throws Exception {
        StoreTestSupport.assumeIoUringIfNeeded(backend);
        Path dir = StoreTestSupport.freshDir("crash-" + backend);
        runChild(dir, backend, "kill");
        verify(dir, true);
    }

    @Test
    void shouldKeepFlushedDataAfterGracefulStop() throws Exception {
        Path dir = StoreTestSupport.freshDir("graceful");
        runChild(dir, null, "graceful");
        verify(dir, false);
    }

    private static void runChild(Path dir, IoBackend backend, String mode) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), CrashChild.class.getName(), dir.toString(),
                backend == null ? "auto" : backend == IoBackend.IO_URING ? "io_uring" : "threadpool", mode);
        Process p = new ProcessBuilder(cmd).redirectError(dir.resolveSibling(dir.getFileName() + ".child.log").toFile())
                .start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
            assertEquals("FLUSHED", out.readLine(), "child reached the flush (see " + dir + ".child.log)");
            if (mode.equals("kill")) {
                assertEquals("WRITING", out.readLine(), "child is writing unflushed data");
                p.destroyForcibly(); // SIGKILL
                assertTrue(p.waitFor(30, TimeUnit.SECONDS), "child ended");
                assertEquals(137, p.exitValue(), "killed by SIGKILL");
            } else {
                assertTrue(p.waitFor(30, TimeUnit.SECONDS), "child ended");
                assertEquals(0, p.exitValue());
            }
        } finally {
            p.destroyForcibly();
        }
    }

    private static void verify(Path dir, boolean checkRegionB) throws Exception {
        try (Arena arena = Arena.ofConfined();
             VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults());
             BlockQueue q = store.newQueue(4)) {
            StoreVolume v = store.get("crash");
            MemorySegment expected = arena.allocate(CrashChild.A_BYTES, 4096);
            StoreTestSupport.fillRandom(expected, CrashChild.SEED);
            MemorySegment got = arena.allocate(CrashChild.A_BYTES, 4096);
            for (long off = 0; off < CrashChild.A_BYTES; off += 1 << 20) {
                StoreTestSupport.read(q, v, off, got.asSlice(off, 1 << 20));
            }
            assertEquals(sha256(expected), sha256(got), "SHA-256 of the flushed region");
            if (checkRegionB) {
                MemorySegment b = arena.allocate(CrashChild.B_BYTES, 4096);
                StoreTestSupport.read(q, v, CrashChild.A_BYTES, b);
                long firstBlock = CrashChild.A_BYTES / BlockPattern.BLOCK;
                for (long i = 0; i < CrashChild.B_BYTES / BlockPattern.BLOCK; i++) {
                    BlockPattern.check(b, i * BlockPattern.BLOCK, firstBlock + i); // zero or whole, never torn
                }
            }
        }
    }

    private static String sha256(MemorySegment seg) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        md.update(seg.asByteBuffer());
        return HexFormat.of().formatHex(md.digest());
    }
}
