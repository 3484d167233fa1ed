package io.rdmablock.initiator.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConnectOptionsTest {
    @TempDir
    Path dir;

    @Test
    void shouldReadTheTokenFromTokenFile() throws Exception {
        var o = new ConnectOptions();
        o.tokenFile = Files.writeString(dir.resolve("token"), "secret\n");
        o.mgmtUrl = "http://127.0.0.1:1";
        o.mgmtClient(); // reads the file; no request is made
        o.tokenFile = dir.resolve("absent");
        var e = assertThrows(IllegalArgumentException.class, o::mgmtClient);
        assertTrue(e.getMessage().startsWith("invalid --token-file: cannot read"), e.getMessage());
    }
}
