package io.rdmablock.node;

import io.rdmablock.node.target.NodeTestHost;
import io.rdmablock.node.target.Subsystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The node as a separate process: serves, then shuts down cleanly on SIGTERM (drain, flush, close). */
class NodeProcessTest {
    private static final Pattern FABRIC = Pattern.compile("storage node started: .*fabric=[^/]*/([0-9.]+):(\\d+)");

    @TempDir
    Path dir;

    @Test
    void shouldServeAndStopCleanlyOnSigterm() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), NodeMain.class.getName(), "--data-dir", dir.toString(),
                "--listen", "127.0.0.1:0", "--provider", "soft", "--create-volume", "v1:8M:512:*")
                .redirectErrorStream(true).start();
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        StringBuilder all = new StringBuilder();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                    synchronized (all) {
                        all.append(l).append('\n');
                    }
                }
            } catch (java.io.IOException ignored) {
                // process gone
            }
        });
        reader.setDaemon(true);
        reader.start();
        try {
            InetSocketAddress fabric = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (fabric == null && System.nanoTime() < deadline) {
                String l = lines.poll(1, TimeUnit.SECONDS);
                Matcher m = l == null ? null : FABRIC.matcher(l);
                if (m != null && m.find()) {
                    fabric = new InetSocketAddress(m.group(1), Integer.parseInt(m.group(2)));
                }
            }
            assertNotNull(fabric, "node did not start: " + all);
            byte[] got = NodeTestHost.writeAndRead(fabric, Subsystem.nqnFor("v1"), 9, 0x3C);
            assertEquals(0x3C, got[100]);
            // SIGTERM through kill(1): Process.destroy() would also close our end of the output pipe
            assertEquals(0, new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).start().waitFor());
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "node did not exit after SIGTERM");
            reader.join(5_000);
            String out;
            synchronized (all) {
                out = all.toString();
            }
            assertEquals(143, p.exitValue(), out);
            assertTrue(out.contains("volumes flushed: count=1, completed=1"), out);
            assertTrue(out.contains("storage node stopped"), out);
        } finally {
            p.destroyForcibly();
        }
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            assertEquals(0x3C, NodeTestHost.read(node.fabricAddress(), Subsystem.nqnFor("v1"), 9)[4095]);
        }
    }
}
