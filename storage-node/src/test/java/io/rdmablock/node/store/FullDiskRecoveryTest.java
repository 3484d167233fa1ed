package io.rdmablock.node.store;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node killed (-9) on a full file system must open its store again: reopening the metadata database replays the
 * write-ahead log into a new table file, which needs space; the store keeps a reserve file for that
 * ({@link MetadataDb#RESERVE_BYTES}). The file system is a 48 MiB tmpfs mounted for the test, so the test needs root
 * (CI runs as root) and is skipped, saying so, without it.
 */
class FullDiskRecoveryTest {

    @Test
    void shouldReopenTheStoreAfterKill9OnAFullFileSystem() throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root to mount a small tmpfs (a full file system without filling the real disk)");
        Path mnt = StoreTestSupport.freshDir("fulldisk");
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", mnt.toString())
                .redirectErrorStream(true).start();
        Assumptions.assumeTrue(mount.waitFor(10, TimeUnit.SECONDS) && mount.exitValue() == 0,
                "mount -t tmpfs failed (no mount permission in this environment)");
        try {
            Path dir = mnt.resolve("node");
            runChildUntilFullThenKill(dir);
            assertEquals(0, Files.getFileStore(mnt).getUsableSpace() / (1 << 20), "file system full before reopen");
            try (VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults())) {
                assertEquals(List.of("full1", "full2"), store.list().stream().map(VolumeInfo::id).sorted().toList(),
                        "both volumes recovered from the write-ahead log");
            }
        } finally {
            new ProcessBuilder("umount", "-l", mnt.toString()).start().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static void runChildUntilFullThenKill(Path dir) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx128m", "-cp",
                System.getProperty("java.class.path"), FullDiskChild.class.getName(), dir.toString());
        Path log = Path.of("target", "store-tests", "fulldisk-child.log").toAbsolutePath();
        Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
            assertEquals("FULL", out.readLine(), "child filled the file system (see " + log + ")");
            p.destroyForcibly(); // SIGKILL: the metadata is only in the write-ahead log
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "child ended");
        } finally {
            p.destroyForcibly();
        }
    }
}
