package io.rdmablock.tools.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Finds the local process listening on a TCP port (the storage node, when the benchmark runs on the node's machine):
 * the listening socket's inode from {@code /proc/net/tcp} and {@code /proc/net/tcp6} (state 0A = LISTEN), then the
 * process whose {@code /proc/<pid>/fd} holds {@code socket:[inode]} (proc(5)). Returns null when not found or not
 * permitted (other users' fds are unreadable without privileges).
 */
final class ListeningProcess {
    private ListeningProcess() {
    }

    static String pidListeningOn(int port) {
        Set<String> inodes = new HashSet<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            try {
                for (String line : Files.readAllLines(Path.of(table))) {
                    String[] f = line.trim().split("\\s+");
                    if (f.length < 10 || !f[3].equals("0A")) {
                        continue;
                    }
                    String local = f[1];
                    int p = Integer.parseInt(local.substring(local.lastIndexOf(':') + 1), 16);
                    if (p == port) {
                        inodes.add(f[9]);
                    }
                }
            } catch (IOException | RuntimeException e) {
                // table missing (no IPv6) or unreadable: try the other
            }
        }
        if (inodes.isEmpty()) {
            return null;
        }
        String self = String.valueOf(ProcessHandle.current().pid());
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path proc : procs) {
                String pid = proc.getFileName().toString();
                if (pid.equals(self)) {
                    continue;
                }
                try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve("fd"))) {
                    for (Path fd : fds) {
                        String target = Files.readSymbolicLink(fd).toString();
                        if (target.startsWith("socket:[") && inodes.contains(target.substring(8, target.length() - 1))) {
                            return pid;
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // process gone or not ours
                }
            }
        } catch (IOException e) {
            return null;
        }
        return null;
    }

    /** True for 127.0.0.0/8, ::1 and localhost. */
    static boolean isLoopback(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        return h.startsWith("127.") || h.equals("::1") || h.equals("[::1]") || h.equals("localhost");
    }
}
