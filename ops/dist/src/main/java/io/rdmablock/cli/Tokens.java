package io.rdmablock.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

/** Cluster bearer tokens: read from a file (trimmed, non-empty) or generated (32 random bytes, hex). */
final class Tokens {
    private Tokens() {
    }

    /**
     * @return the token in the file, whitespace trimmed
     * @throws IllegalArgumentException when the file cannot be read or is empty (message names the option)
     */
    static String read(String option, Path file) {
        try {
            String token = Files.readString(file, StandardCharsets.UTF_8).trim();
            if (token.isEmpty()) {
                throw new IllegalArgumentException("invalid " + option + ": " + file + " is empty");
            }
            return token;
        } catch (IOException e) {
            throw new IllegalArgumentException("invalid " + option + ": cannot read " + file + " (" + e + ")");
        }
    }

    /** @return a new random token: 64 hex digits */
    static String generate() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /** Writes the token to the file, readable by the owner only. */
    static void write(Path file, String token) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(tmp, token + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
