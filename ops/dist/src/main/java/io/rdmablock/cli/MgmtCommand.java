package io.rdmablock.cli;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.api.MgmtConfiguration;
import io.rdmablock.mgmt.api.store.EtcdAccess;
import io.rdmablock.mgmt.api.store.EtcdMetadataStore;
import io.rdmablock.mgmt.api.store.SecretCipher;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code rdmablock mgmt}: runs the management server in the foreground until SIGINT/SIGTERM. Metadata lives in
 * {@code <data-dir>/metadata} (RocksDB), or in etcd with {@code --etcd-endpoints} / env
 * {@code RDMABLOCK_ETCD_ENDPOINTS} (keys under {@code --etcd-prefix}). Token: {@code --token-file}, else {@code --token} / env
 * {@code RDMABLOCK_TOKEN}, else {@code <data-dir>/token} (created with a random token when absent). Prints
 * {@code management API: <url>} on stdout once it listens, then {@code token: <token>} only when it generated the
 * token (else {@code token source: <where>}), so a token given to it never lands in a log file. The read-only token
 * (GET routes only) likewise: {@code --read-token-file}, else {@code --read-token} / env
 * {@code RDMABLOCK_READ_TOKEN}, else {@code <data-dir>/read-token} (created when absent), printed as
 * {@code read token: <token>} only when generated. TLS: {@code --tls-cert} and {@code --tls-key} (PEM) make it
 * HTTPS; without them it is plain HTTP, meant for loopback (a warning on stderr for any other listen address), and
 * the nodes' secrets go only to nodes connecting over loopback unless {@code --allow-plaintext-secrets} (labs).
 * Timeouts: {@code --idle-timeout-ms}, {@code --request-timeout-ms}. Several servers on one etcd: each gives
 * {@code --advertise-url} (the URL the others redirect writes to; default its listener's). etcd over TLS:
 * {@code --etcd-ca-cert} (+ {@code --etcd-cert}/{@code --etcd-key} for a client certificate); etcd users:
 * {@code --etcd-user} + {@code --etcd-password-file}. {@code --secret-key-file} encrypts the stored secrets
 * (docs/configuration.md).
 */
@Command(name = "mgmt", description = "Run the management server (REST API, cluster metadata).",
        mixinStandardHelpOptions = true)
public final class MgmtCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:8080",
            description = "Listen address (default ${DEFAULT-VALUE}; port 0 = any free port).")
    String listen;

    @Option(names = "--data-dir", required = true, paramLabel = "DIR",
            description = "Directory for the metadata store and the generated token.")
    Path dataDir;

    @Option(names = "--token", paramLabel = "TOKEN", defaultValue = "${env:RDMABLOCK_TOKEN}",
            description = "Cluster bearer token (env RDMABLOCK_TOKEN).")
    String token;

    @Option(names = "--token-file", paramLabel = "FILE", description = "Read the cluster token from FILE.")
    Path tokenFile;

    @Option(names = "--read-token", paramLabel = "TOKEN", defaultValue = "${env:RDMABLOCK_READ_TOKEN}",
            description = "Read-only bearer token, good for GET routes only (env RDMABLOCK_READ_TOKEN); default "
                    + "<data-dir>/read-token, created when absent.")
    String readToken;

    @Option(names = "--read-token-file", paramLabel = "FILE", description = "Read the read-only token from FILE.")
    Path readTokenFile;

    @Option(names = "--tls-cert", paramLabel = "PEM",
            description = "Serve HTTPS with this certificate chain (PEM, leaf first); needs --tls-key.")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM",
            description = "Private key of --tls-cert (PEM, PKCS#8 or PKCS#1, unencrypted).")
    Path tlsKey;

    @Option(names = "--allow-plaintext-secrets",
            description = "Labs only: hand the nodes their secrets (node key, peer link secrets, the hosts' "
                    + "DH-HMAC-CHAP secrets) over plain HTTP from any address; anyone on the path reads every secret. "
                    + "Without it and without --tls-cert they go only to nodes connecting over loopback; the others "
                    + "are told why in their heartbeat answers (docs/authentication.md).")
    boolean allowPlaintextSecrets;

    @Option(names = "--idle-timeout-ms", paramLabel = "MS", defaultValue = "60000",
            description = "Close a connection idle for this long (default ${DEFAULT-VALUE}, 1..3600000).")
    long idleTimeoutMs;

    @Option(names = "--request-timeout-ms", paramLabel = "MS", defaultValue = "10000",
            description = "A request whose headers or body are not in whole within this is answered 408 or its "
                    + "connection closed (default ${DEFAULT-VALUE}, 1..3600000).")
    long requestTimeoutMs;

    @Option(names = "--node-timeout-ms", paramLabel = "MS", defaultValue = "6000",
            description = "A node without heartbeat for this long is down (default ${DEFAULT-VALUE}, 100..3600000).")
    long nodeTimeoutMs;

    @Option(names = "--lease-ms", paramLabel = "MS", defaultValue = "2000",
            description = "Primary lease, sent to nodes in every heartbeat answer; a primary without a heartbeat for "
                    + "this long that is reported unreachable is replaced (default ${DEFAULT-VALUE}, 100..600000).")
    long leaseMs;

    @Option(names = "--sweep-ms", paramLabel = "MS", defaultValue = "200",
            description = "Interval of the liveness sweep that promotes a new primary (default ${DEFAULT-VALUE}, "
                    + "10..60000).")
    long sweepMs;

    @Option(names = "--etcd-endpoints", paramLabel = "URL[,URL...]", defaultValue = "${env:RDMABLOCK_ETCD_ENDPOINTS}",
            description = "Keep cluster metadata in etcd at these client URLs (env RDMABLOCK_ETCD_ENDPOINTS) instead "
                    + "of RocksDB in --data-dir. Several management servers may share one etcd: one leads (an etcd "
                    + "lease-bound election) and executes writes; the others answer reads and redirect writes to it "
                    + "with 307 (503 no-leader while none leads).")
    String etcdEndpoints;

    @Option(names = "--advertise-url", paramLabel = "URL",
            description = "This server's base URL as clients reach it, the target of the other servers' 307 "
                    + "redirects (with --etcd-endpoints; default: http(s)://LISTEN-HOST:PORT).")
    String advertiseUrl;

    @Option(names = "--etcd-prefix", paramLabel = "PREFIX", defaultValue = EtcdMetadataStore.DEFAULT_PREFIX,
            description = "Key prefix in etcd (default ${DEFAULT-VALUE}).")
    String etcdPrefix;

    @Option(names = "--etcd-timeout-ms", paramLabel = "MS", defaultValue = "5000",
            description = "Bound of each etcd call; past it the request fails with 503 (default ${DEFAULT-VALUE}, "
                    + "100..600000).")
    long etcdTimeoutMs;

    @Option(names = "--etcd-ca-cert", paramLabel = "PEM",
            defaultValue = "${sys:" + MgmtConfiguration.ETCD_CA_CERT + ":-${env:RDMABLOCK_ETCD_CA_CERT}}",
            description = "Talk TLS to etcd, trusting this CA for the members' certificates (PEM; env "
                    + "RDMABLOCK_ETCD_CA_CERT). Needed by https:// endpoints, refused with http:// ones.")
    Path etcdCaCert;

    @Option(names = "--etcd-cert", paramLabel = "PEM",
            defaultValue = "${sys:" + MgmtConfiguration.ETCD_CERT + ":-${env:RDMABLOCK_ETCD_CERT}}",
            description = "Client certificate towards etcd (PEM, leaf first; for etcd's --client-cert-auth; env "
                    + "RDMABLOCK_ETCD_CERT); needs --etcd-key and --etcd-ca-cert.")
    Path etcdCert;

    @Option(names = "--etcd-key", paramLabel = "PEM",
            defaultValue = "${sys:" + MgmtConfiguration.ETCD_KEY + ":-${env:RDMABLOCK_ETCD_KEY}}",
            description = "Private key of --etcd-cert (PEM, PKCS#8 unencrypted; env RDMABLOCK_ETCD_KEY).")
    Path etcdKey;

    @Option(names = "--etcd-user", paramLabel = "NAME",
            defaultValue = "${sys:" + MgmtConfiguration.ETCD_USER + ":-${env:RDMABLOCK_ETCD_USER}}",
            description = "etcd user (etcd's authentication; env RDMABLOCK_ETCD_USER); needs --etcd-password-file.")
    String etcdUser;

    @Option(names = "--etcd-password-file", paramLabel = "FILE",
            defaultValue = "${sys:" + MgmtConfiguration.ETCD_PASSWORD_FILE + ":-${env:RDMABLOCK_ETCD_PASSWORD_FILE}}",
            description = "File whose first line is the password of --etcd-user (env RDMABLOCK_ETCD_PASSWORD_FILE; "
                    + "never a password on the command line).")
    Path etcdPasswordFile;

    @Option(names = "--secret-key-file", paramLabel = "FILE",
            defaultValue = "${sys:" + MgmtConfiguration.SECRET_KEY_FILE + ":-${env:RDMABLOCK_SECRET_KEY_FILE}}",
            description = "Encrypt the hosts' DH-HMAC-CHAP secrets and the node keys in the metadata store (etcd or "
                    + "RocksDB) with AES-256-GCM under this key: base64 of 32 random bytes, made with "
                    + "'head -c 32 /dev/urandom | base64 > FILE' (env RDMABLOCK_SECRET_KEY_FILE). Every management "
                    + "server of a cluster needs the same file. Without it they are stored in clear.")
    Path secretKeyFile;

    @Option(names = "--rebuild-after-ms", paramLabel = "MS", defaultValue = "600000",
            description = "A copy whose node has not heartbeated for this long is rebuilt on another node "
                    + "(docs/resync.md; default ${DEFAULT-VALUE}, 1000..604800000).")
    long rebuildAfterMs;

    /** Tests: return once started instead of waiting for a signal (the server is left in {@link #server}). */
    @Option(names = "--no-wait", hidden = true)
    boolean noWait;

    MgmtServer server;

    /** Where the token came from, or null when this run generated it. */
    private String tokenSource;
    /** Where the read token came from, or null when this run generated it. */
    private String readTokenSource;

    @Override
    public Integer call() throws IOException, InterruptedException {
        String[] hostPort = parseListen(listen);
        if (nodeTimeoutMs < 100 || nodeTimeoutMs > 3_600_000) {
            throw new IllegalArgumentException("invalid --node-timeout-ms: --node-timeout-ms=" + nodeTimeoutMs
                    + ", min=100, max=3600000");
        }
        if (leaseMs < 100 || leaseMs > 600_000) {
            throw new IllegalArgumentException("invalid --lease-ms: --lease-ms=" + leaseMs + ", min=100, max=600000");
        }
        if (sweepMs < 10 || sweepMs > 60_000) {
            throw new IllegalArgumentException("invalid --sweep-ms: --sweep-ms=" + sweepMs + ", min=10, max=60000");
        }
        if (etcdTimeoutMs < 100 || etcdTimeoutMs > 600_000) {
            throw new IllegalArgumentException("invalid --etcd-timeout-ms: --etcd-timeout-ms=" + etcdTimeoutMs
                    + ", min=100, max=600000");
        }
        EtcdMetadataStore.Config etcd = etcdConfig();
        SecretCipher secrets = secretKeyFile == null ? SecretCipher.NONE : SecretCipher.fromKeyFile(secretKeyFile);
        if (rebuildAfterMs < 1_000 || rebuildAfterMs > 604_800_000L) {
            throw new IllegalArgumentException("invalid --rebuild-after-ms: --rebuild-after-ms=" + rebuildAfterMs
                    + ", min=1000, max=604800000");
        }
        Files.createDirectories(dataDir);
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new IllegalArgumentException("invalid TLS options: --tls-cert and --tls-key go together, given "
                    + (tlsCert == null ? "--tls-key only" : "--tls-cert only"));
        }
        for (Path pem : new Path[] {tlsCert, tlsKey}) {
            if (pem != null && !Files.isReadable(pem)) {
                throw new IllegalArgumentException("invalid " + (pem == tlsCert ? "--tls-cert" : "--tls-key") + ": "
                        + pem + " is not a readable file");
            }
        }
        String clusterToken = resolveToken();
        String read = resolveReadToken();
        if (read.equals(clusterToken)) {
            throw new IllegalArgumentException("invalid read token (" + (readTokenSource == null ? "generated"
                    : readTokenSource) + "): equal to the cluster token, must differ");
        }
        var http = io.rdmablock.mgmt.api.http.MgmtHttpOptions.of(clusterToken).withReadToken(read)
                .withTls(tlsCert, tlsKey).withTimeouts(idleTimeoutMs, requestTimeoutMs)
                .withPlaintextSecrets(allowPlaintextSecrets);
        if (tlsCert == null && !isLoopback(hostPort[0])) {
            spec.commandLine().getErr().println("warning: plain HTTP on " + hostPort[0] + " (not loopback): tokens "
                    + "cross the network in clear; give --tls-cert/--tls-key" + (allowPlaintextSecrets
                    ? "; --allow-plaintext-secrets: the nodes' secrets too (labs only)"
                    : "; nodes connecting from other machines get no secrets (node keys, host secrets)"));
            spec.commandLine().getErr().flush();
        }
        server = MgmtServer.start(dataDir, etcd, secrets, MgmtServer.Settings.of(hostPort[0], Integer.parseInt(hostPort[1]),
                        clusterToken).withHttp(http).withNodeTimeoutMs(nodeTimeoutMs).withLeaseMs(leaseMs)
                .withSweepIntervalMs(sweepMs).withRebuildAfterMs(rebuildAfterMs).withAdvertiseUrl(advertiseUrl));
        PrintWriter out = spec.commandLine().getOut();
        out.println("management API: " + server.url());
        out.println("metadata: " + (etcd == null ? "RocksDB in " + dataDir.resolve("metadata")
                : "etcd " + etcd.endpoints() + " prefix " + etcd.prefix() + (etcd.access().tls() ? ", TLS" : "")
                + (etcd.access().cert() != null ? ", client certificate" : "")
                + (etcd.access().user() != null ? ", user " + etcd.access().user() : "")));
        out.println("secrets at rest: " + (secrets.enabled() ? "encrypted (AES-256-GCM, --secret-key-file "
                + secretKeyFile + ")" : "in clear (no --secret-key-file)"));
        if (etcd != null) {
            out.println("advertised URL: " + server.leaderView().selfUrl() + " (leader election "
                    + MgmtServer.electionOf(etcd) + ")");
        }
        out.println(tokenSource == null ? "token: " + clusterToken : "token source: " + tokenSource);
        out.println(readTokenSource == null ? "read token: " + read : "read token source: " + readTokenSource);
        out.flush();
        if (noWait) {
            return ExitCodes.OK;
        }
        var stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "mgmt-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        stopped.await();
        return ExitCodes.OK;
    }

    /** @return the etcd store's configuration, or null without --etcd-endpoints (then no etcd option may be given) */
    private EtcdMetadataStore.Config etcdConfig() {
        var access = new EtcdAccess(etcdCaCert, etcdCert, etcdKey, etcdUser, etcdPasswordFile);
        if (etcdEndpoints == null || etcdEndpoints.isBlank()) {
            if (!access.equals(EtcdAccess.NONE)) {
                throw new IllegalArgumentException("invalid etcd options: --etcd-ca-cert, --etcd-cert, --etcd-key, "
                        + "--etcd-user and --etcd-password-file need --etcd-endpoints");
            }
            return null;
        }
        var endpoints = EtcdMetadataStore.Config.parseEndpoints(etcdEndpoints);
        access.checkEndpoints(endpoints);
        return new EtcdMetadataStore.Config(endpoints, etcdPrefix, Duration.ofMillis(etcdTimeoutMs)).withAccess(access);
    }

    private String resolveToken() throws IOException {
        if (tokenFile != null) {
            tokenSource = "--token-file " + tokenFile;
            return Tokens.read("--token-file", tokenFile);
        }
        if (token != null && !token.isBlank()) {
            tokenSource = "--token or RDMABLOCK_TOKEN";
            return token.trim();
        }
        Path file = dataDir.resolve("token");
        if (Files.exists(file)) {
            tokenSource = file.toString();
            return Tokens.read("token file", file);
        }
        String generated = Tokens.generate();
        Tokens.write(file, generated);
        return generated;
    }

    private String resolveReadToken() throws IOException {
        if (readTokenFile != null) {
            readTokenSource = "--read-token-file " + readTokenFile;
            return Tokens.read("--read-token-file", readTokenFile);
        }
        if (readToken != null && !readToken.isBlank()) {
            readTokenSource = "--read-token or RDMABLOCK_READ_TOKEN";
            return readToken.trim();
        }
        Path file = dataDir.resolve("read-token");
        if (Files.exists(file)) {
            readTokenSource = file.toString();
            return Tokens.read("read token file", file);
        }
        String generated = Tokens.generate();
        Tokens.write(file, generated);
        return generated;
    }

    private static boolean isLoopback(String host) {
        return "localhost".equals(host) || host.startsWith("127.") || "::1".equals(host);
    }

    /** @return {host, port} of {@code host:port}, port 0..65535 */
    static String[] parseListen(String value) {
        String why = "must be HOST:PORT with port 0..65535 (0 = any free port)";
        int colon = value == null ? -1 : value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1) {
            throw new IllegalArgumentException("invalid --listen: --listen=\"" + value + "\", " + why);
        }
        String host = value.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            int port = Integer.parseInt(value.substring(colon + 1));
            if (port < 0 || port > 65535) {
                throw new NumberFormatException();
            }
            return new String[] {host, Integer.toString(port)};
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid --listen: --listen=\"" + value + "\", " + why);
        }
    }
}
