package io.rdmablock.tools.device;

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

    @Test
    void shouldAskForTheHostNqnOfAHostCredential() throws Exception {
        var o = new ConnectOptions();
        o.mgmtUrl = "http://127.0.0.1:1";
        o.volume = "v";
        o.hostnqnFile = dir.resolve("no-hostnqn"); // not this machine's /etc/nvme/hostnqn
        o.tokenFile = Files.writeString(dir.resolve("host-credential"), "rbh1:abc:" + "A".repeat(43) + "\n");
        var e = assertThrows(IllegalArgumentException.class, () -> o.open());
        assertTrue(e.getMessage().startsWith("invalid --hostnqn: none given, but the token is a host credential"),
                e.getMessage());
        assertTrue(ConnectOptions.isHostCredential("rbh1:abc:x"));
        org.junit.jupiter.api.Assertions.assertFalse(ConnectOptions.isHostCredential("rbn1:abc:x"));
    }

    @Test
    void shouldConnectAsTheOptionElseNvmeClisHostNqnFile() throws Exception {
        var o = new ConnectOptions();
        o.hostnqnFile = Files.writeString(dir.resolve("hostnqn"), "nqn.2014-08.org.nvmexpress:uuid:abc\n");
        if (System.getenv("RDMABLOCK_HOSTNQN") == null) {
            org.junit.jupiter.api.Assertions.assertEquals("nqn.2014-08.org.nvmexpress:uuid:abc", o.hostnqn());
            o.hostnqnFile = dir.resolve("absent");
            org.junit.jupiter.api.Assertions.assertNull(o.hostnqn(), "a random NQN then");
        }
        o.hostnqn = "nqn.2026-11.io.example:h";
        org.junit.jupiter.api.Assertions.assertEquals("nqn.2026-11.io.example:h", o.hostnqn());
    }

    @Test
    void shouldTakeACommaSeparatedListOfManagementUrls() {
        var o = new ConnectOptions();
        o.mgmtUrl = "http://127.0.0.1:1,http://127.0.0.1:2";
        org.junit.jupiter.api.Assertions.assertEquals(java.util.List.of(java.net.URI.create("http://127.0.0.1:1"),
                java.net.URI.create("http://127.0.0.1:2")), o.mgmtClient().baseUris());
        o.mgmtUrl = "http://127.0.0.1:1,127.0.0.1:2";
        var e = assertThrows(IllegalArgumentException.class, o::mgmtClient);
        assertTrue(e.getMessage().startsWith("invalid --mgmt-url: element 2 \"127.0.0.1:2\""), e.getMessage());
    }

    @picocli.CommandLine.Command(name = "t")
    static final class Cmd implements Runnable {
        @picocli.CommandLine.Mixin
        ConnectOptions connect = new ConnectOptions();

        @Override
        public void run() {
        }
    }

    @Test
    void shouldTakeAndBoundThePathAndFailoverTimeouts() {
        Cmd c = new Cmd();
        new picocli.CommandLine(c).parseArgs("--path-timeout-ms", "250", "--failover-timeout-ms", "5000");
        org.junit.jupiter.api.Assertions.assertEquals(250, c.connect.pathTimeoutMs);
        org.junit.jupiter.api.Assertions.assertEquals(5000, c.connect.failoverTimeoutMs);
        Cmd d = new Cmd();
        new picocli.CommandLine(d).parseArgs();
        org.junit.jupiter.api.Assertions.assertEquals(1000, d.connect.pathTimeoutMs);
        org.junit.jupiter.api.Assertions.assertEquals(30_000, d.connect.failoverTimeoutMs);
        var e = assertThrows(picocli.CommandLine.ParameterException.class,
                () -> new picocli.CommandLine(new Cmd()).parseArgs("--path-timeout-ms", "-1"));
        assertTrue(e.getMessage().contains("invalid --path-timeout-ms: -1, min=0, max=3600000"), e.getMessage());
        e = assertThrows(picocli.CommandLine.ParameterException.class,
                () -> new picocli.CommandLine(new Cmd()).parseArgs("--failover-timeout-ms", "0"));
        assertTrue(e.getMessage().contains("invalid --failover-timeout-ms: 0, min=1, max=86400000"), e.getMessage());
    }
}
