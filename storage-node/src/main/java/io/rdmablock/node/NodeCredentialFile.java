package io.rdmablock.node;

import io.rdmablock.mgmt.client.NodeAgent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The node's management credential (docs/authentication.md, "Credentials and scopes"): {@code <data-dir>/}
 * {@value #FILE}, next to {@link NodeIdentity#FILE}, one line, mode 0600 where the file system has POSIX
 * permissions. Written atomically and durably (temporary file, fsync, rename, fsync of the directory), as the node id.
 * The credential is a secret: it is never logged.
 */
final class NodeCredentialFile implements NodeAgent.CredentialStore {
    static final String FILE = "node-credential";
    private final Path dataDir;

    NodeCredentialFile(Path dataDir) {
        this.dataDir = dataDir;
    }

    /** @return the stored credential, or null when there is none (or it cannot be read: the cluster token is used) */
    @Override
    public String load() {
        try {
            String s = Files.readString(dataDir.resolve(FILE), StandardCharsets.UTF_8).strip();
            return s.isEmpty() ? null : s;
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + dataDir.resolve(FILE), e);
        }
    }

    @Override
    public void save(String credential) {
        Path tmp = dataDir.resolve(FILE + ".tmp");
        try {
            Files.createDirectories(dataDir);
            Files.deleteIfExists(tmp);
            try {
                Files.createFile(tmp, PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rw-------")));
            } catch (UnsupportedOperationException noPosix) {
                Files.createFile(tmp);
            }
            try (var ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.wrap((credential + "\n").getBytes(StandardCharsets.UTF_8)));
                ch.force(true);
            }
            Files.move(tmp, dataDir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            try (var dir = FileChannel.open(dataDir, StandardOpenOption.READ)) {
                dir.force(true);
            } catch (IOException e) {
                // some file systems refuse fsync on a directory: the rename is then as durable as they make it
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot store the node credential in " + dataDir.resolve(FILE), e);
        }
    }
}
