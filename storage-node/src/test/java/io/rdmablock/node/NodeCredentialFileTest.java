package io.rdmablock.node;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

class NodeCredentialFileTest {
    @Test
    void shouldKeepTheCredentialNextToTheNodeIdReadableByTheOwnerOnly(@TempDir Path dir) throws Exception {
        var file = new NodeCredentialFile(dir);
        assertNull(file.load(), "none yet");
        file.save("rbn1:n1:" + "a".repeat(43));
        file.save("rbn1:n1:" + "b".repeat(43)); // replaced
        assertEquals("rbn1:n1:" + "b".repeat(43), new NodeCredentialFile(dir).load());
        Path f = dir.resolve(NodeCredentialFile.FILE);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        assertFalse(Files.exists(dir.resolve(NodeCredentialFile.FILE + ".tmp")));
    }
}
