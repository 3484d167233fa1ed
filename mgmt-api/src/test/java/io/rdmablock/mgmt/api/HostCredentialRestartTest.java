package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.IssuedHostCredential;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.Volume;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A host credential outlives a restart of a management server on RocksDB, and {@link MgmtClient} (the initiator's
 * client) reads and reports with it; a revocation outlives it too.
 */
class HostCredentialRestartTest {
    private static final String TOKEN = "restart-test-token";
    private static final String H1 = "nqn.2014-08.org.example:h1";

    @TempDir
    Path dir;

    /**
     * RocksDB under {@code dir}; no liveness sweep in the test's time (a sweep still on a worker when the server
     * closes could read the closed store).
     */
    private MgmtServer start() {
        return MgmtServer.start(dir, null, MgmtServer.Settings.of("127.0.0.1", 0, TOKEN).withNodeTimeoutMs(60_000)
                .withSweepIntervalMs(3_600_000));
    }

    @Test
    void shouldKeepAHostCredentialAndItsRevocationAcrossARestart() {
        IssuedHostCredential kept;
        IssuedHostCredential revoked;
        try (MgmtServer server = start()) {
            var operator = new MgmtClient(URI.create(server.url()), TOKEN);
            operator.registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
            operator.createVolume(new CreateVolumeRequest("v", 1L << 20, 4096, 1, 1, List.of(H1), false));
            kept = operator.issueHostCredential(H1);
            revoked = operator.issueHostCredential(H1);
            operator.revokeHostCredential(revoked.id());
        }
        try (MgmtServer server = start()) {
            var host = new MgmtClient(URI.create(server.url()), kept.credential());
            Volume v = host.getVolume("v");
            assertEquals(List.of(H1), v.allowedHosts());
            assertEquals("v", host.reportUnreachable("v", "n1", v.epoch(), H1).name());
            var operator = new MgmtClient(URI.create(server.url()), TOKEN);
            assertEquals(List.of(kept.id()), operator.listHostCredentials().stream().map(c -> c.id()).toList());
            var refused = assertThrows(MgmtException.class,
                    () -> new MgmtClient(URI.create(server.url()), revoked.credential()).getVolume("v"));
            assertEquals(401, refused.status());
            var scope = assertThrows(MgmtException.class, () -> host.deleteVolume("v", true));
            assertEquals(403, scope.status());
            assertEquals(ProblemTypes.FORBIDDEN, scope.problem().type());
        }
    }
}
