package io.rdmablock.cli;

import io.rdmablock.mgmt.client.MgmtClient;
import picocli.CommandLine.Option;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * How a command reaches the management plane: {@code --mgmt-url} (env {@code RDMABLOCK_MGMT_URL}, default
 * {@code http://127.0.0.1:8080}; a comma-separated list of several management servers, docs/ha.md), {@code --token} (env {@code RDMABLOCK_TOKEN}, else {@code RDMABLOCK_READ_TOKEN})
 * or {@code --token-file}: the cluster token, or the read-only token for commands that only read; {@code --ca-cert}
 * (env {@code RDMABLOCK_CA_CERT}) for an https URL; and {@code --timeout-ms}. A picocli mixin.
 */
public final class MgmtOptions {
    @Option(names = "--mgmt-url", paramLabel = "URL[,URL...]",
            defaultValue = "${env:RDMABLOCK_MGMT_URL:-http://127.0.0.1:8080}",
            description = "Management server URL, or a comma-separated list of several management servers (env "
                    + "RDMABLOCK_MGMT_URL; default ${DEFAULT-VALUE}).")
    String mgmtUrl;

    @Option(names = "--token", paramLabel = "TOKEN", defaultValue = "${env:RDMABLOCK_TOKEN}",
            description = "Bearer token (env RDMABLOCK_TOKEN, else RDMABLOCK_READ_TOKEN): the cluster token, or the "
                    + "read-only token for commands that only read.")
    String token;

    @Option(names = "--ca-cert", paramLabel = "PEM",
            description = "Trust only this CA (PEM) for an https --mgmt-url (env RDMABLOCK_CA_CERT; default the "
                    + "JDK's CAs).")
    Path caCert;

    @Option(names = "--token-file", paramLabel = "FILE", description = "Read the token from FILE instead.")
    Path tokenFile;

    @Option(names = "--timeout-ms", paramLabel = "MS", defaultValue = "10000",
            description = "Per-request timeout in ms (default ${DEFAULT-VALUE}).")
    long timeoutMs;

    /** @return the token from --token-file, else --token/RDMABLOCK_TOKEN, else RDMABLOCK_READ_TOKEN, else null */
    public String token() {
        if (tokenFile != null) {
            return Tokens.read("--token-file", tokenFile);
        }
        if (token == null || token.isBlank()) {
            String read = System.getenv("RDMABLOCK_READ_TOKEN");
            return read == null || read.isBlank() ? null : read.trim();
        }
        return token.trim();
    }

    /**
     * @return the management URLs, in the order given
     * @throws IllegalArgumentException naming {@code --mgmt-url} and the element that is not an absolute http(s) URL
     */
    public List<URI> urls() {
        return MgmtClient.parseUrls("--mgmt-url", mgmtUrl);
    }

    /** @return a client for these options */
    public MgmtClient client() {
        return client(1);
    }

    /**
     * @param atLeastMs least request timeout, ms (calls the server answers only after a bounded wait)
     * @return a client for these options whose timeout is at least {@code atLeastMs}
     * @throws IllegalArgumentException when {@code --timeout-ms} is out of bounds (1..600000)
     */
    public MgmtClient client(long atLeastMs) {
        if (timeoutMs < 1 || timeoutMs > 600_000) {
            throw new IllegalArgumentException("invalid --timeout-ms: --timeout-ms=" + timeoutMs
                    + ", min=1, max=600000");
        }
        return new MgmtClient(urls(), token(), Duration.ofMillis(Math.max(timeoutMs, atLeastMs)),
                io.rdmablock.mgmt.client.TlsTrust.fromOptionOrEnv(caCert));
    }
}
