package io.rdmablock.cli;

import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code rdmablock mgmt --allow-plaintext-secrets}: without TLS a node reaching the server over a non-loopback address
 * gets its secrets only with the flag, and the warning on stderr says which (needs such an address on this machine).
 */
class MgmtPlaintextSecretsCliTest {
    @TempDir
    Path dir;

    private static InetAddress localNonLoopback() throws Exception {
        for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (i.isUp() && !i.isLoopback()) {
                for (InetAddress a : Collections.list(i.getInetAddresses())) {
                    if (a instanceof Inet4Address && !a.isLinkLocalAddress()) {
                        return a;
                    }
                }
            }
        }
        return null;
    }

    /** Runs mgmt on 0.0.0.0 (with {@code flags}), beats as its node over {@code other}; @return {stderr, answer} */
    private Object[] beat(String name, InetAddress other, String... flags) throws Exception {
        var cmd = new MgmtCommand();
        var args = new java.util.ArrayList<>(List.of("--listen", "0.0.0.0:0", "--data-dir",
                dir.resolve(name).toString(), "--no-wait"));
        args.addAll(List.of(flags));
        var r = CliRun.of(new picocli.CommandLine(cmd), args.toArray(String[]::new));
        try {
            assertEquals(0, r.exitCode(), r.err());
            String token = Files.readString(dir.resolve(name).resolve("token")).trim();
            String credential = new MgmtClient(URI.create(cmd.server.url()), token).registerNodeForCredential(
                    new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30)).credential();
            URI there = URI.create("http://" + other.getHostAddress() + ":" + cmd.server.port());
            HeartbeatResponse answer = new MgmtClient(there, credential).heartbeat("n1",
                    new HeartbeatRequest(1L << 30, List.of()));
            return new Object[] {r.err(), answer};
        } finally {
            if (cmd.server != null) {
                cmd.server.close();
            }
        }
    }

    @Test
    void shouldHandSecretsOverPlainHttpToAnotherAddressOnlyWithTheFlag() throws Exception {
        InetAddress other = localNonLoopback();
        Assumptions.assumeTrue(other != null, "no non-loopback address on this machine");

        Object[] without = beat("plain", other);
        assertTrue(((String) without[0]).contains("get no secrets"), (String) without[0]);
        HeartbeatResponse withheld = (HeartbeatResponse) without[1];
        assertNull(withheld.nodeKey());
        assertTrue(withheld.secretsWithheld() != null && withheld.secretsWithheld().contains(other.getHostAddress())
                && withheld.secretsWithheld().contains("--allow-plaintext-secrets"), withheld.secretsWithheld());

        Object[] with = beat("lab", other, "--allow-plaintext-secrets");
        assertTrue(((String) with[0]).contains("--allow-plaintext-secrets"), (String) with[0]);
        HeartbeatResponse handed = (HeartbeatResponse) with[1];
        assertNull(handed.secretsWithheld());
        assertNotNull(handed.nodeKey());
    }

    @Test
    void shouldDescribeTheFlagInTheHelp() {
        var r = CliRun.of("mgmt", "--help");
        assertTrue(r.out().contains("--allow-plaintext-secrets") && r.out().contains("Labs only"), r.out());
    }
}
