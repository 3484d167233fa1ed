package io.rdmablock.node;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The node's stable identity: {@code <data-dir>/node-id}, created once as {@code <host name>-<8 hex digits>}, so that
 * several nodes on one host get distinct ids and a restarted node keeps its id (and its volumes in the management
 * plane) whatever port it listens on.
 */
final class NodeIdentity {
    static final String FILE = "node-id";

    private NodeIdentity() {
    }

    /**
     * This machine's host name: {@link InetAddress#getLocalHost()}, or, when the name does not resolve (no entry in
     * /etc/hosts or DNS, e.g. a minimal VM or container), the kernel's {@code /proc/sys/kernel/hostname}, else
     * {@code localhost}. Never throws.
     */
    static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            try {
                String k = Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.UTF_8).strip();
                return k.isEmpty() ? "localhost" : k;
            } catch (IOException | RuntimeException ignored) {
                return "localhost";
            }
        }
    }

    static String loadOrCreate(Path dataDir) throws IOException {
        Path f = dataDir.resolve(FILE);
        if (Files.exists(f)) {
            String id = Files.readString(f, StandardCharsets.UTF_8).strip();
            if (!id.isEmpty()) {
                return id;
            }
        }
        Files.createDirectories(dataDir);
        String host = localHostName().replaceAll("[^A-Za-z0-9._-]", "-");
        String id = host + "-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        Path tmp = dataDir.resolve(FILE + ".tmp");
        Files.writeString(tmp, id + "\n", StandardCharsets.UTF_8);
        // durable before and after the rename: after a power loss an empty node-id would make this node a new one
        // (its volumes would read as lost on the management server although the data is intact)
        try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (var dir = java.nio.channels.FileChannel.open(dataDir, java.nio.file.StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException e) {
            // some file systems refuse fsync on a directory: the rename is then as durable as they make it
        }
        return id;
    }
}
