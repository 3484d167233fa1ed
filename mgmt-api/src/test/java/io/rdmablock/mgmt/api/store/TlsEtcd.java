package io.rdmablock.mgmt.api.store;

import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One real etcd member serving its clients over TLS with {@code --client-cert-auth}, and the PKI it needs, made at
 * test time with {@code openssl} in a directory: a CA ({@link #caCert}), the member's certificate (SAN IP 127.0.0.1
 * and DNS localhost), a client certificate ({@link #clientCert}, {@link #clientKey}) and a second, untrusted CA's
 * client certificate ({@link #strangerCert}, {@link #strangerKey}). Keys are EC P-256 in PKCS#8. {@link #close()}
 * kills the member (also from a shutdown hook).
 */
final class TlsEtcd implements AutoCloseable {
    final Path caCert;
    final Path clientCert;
    final Path clientKey;
    final Path strangerCert;
    final Path strangerKey;
    private final Path dir;
    private final int clientPort;
    private final Process process;
    private final Thread hook;

    private TlsEtcd(Path dir) throws IOException, InterruptedException {
        this.dir = dir;
        String cnf = """
                [req]
                distinguished_name = dn
                prompt = no
                [dn]
                CN = rdmablock-test-ca
                [ca]
                basicConstraints = critical,CA:TRUE
                keyUsage = critical,keyCertSign,cRLSign
                subjectKeyIdentifier = hash
                [server]
                basicConstraints = CA:FALSE
                subjectAltName = IP:127.0.0.1,DNS:localhost
                keyUsage = critical,digitalSignature
                extendedKeyUsage = serverAuth,clientAuth
                [client]
                basicConstraints = CA:FALSE
                keyUsage = critical,digitalSignature
                extendedKeyUsage = clientAuth
                """;
        Files.writeString(dir.resolve("pki.cnf"), cnf);
        this.caCert = ca("ca");
        leaf("server", "ca", "server", "etcd");
        this.clientCert = leaf("client", "ca", "client", "root");
        this.clientKey = dir.resolve("client.key");
        ca("stranger-ca");
        this.strangerCert = leaf("stranger", "stranger-ca", "client", "root");
        this.strangerKey = dir.resolve("stranger.key");
        this.clientPort = freePort();
        int peerPort = freePort();
        String client = "https://127.0.0.1:" + clientPort;
        String peer = "http://127.0.0.1:" + peerPort;
        var command = List.of(EtcdCluster.binary().toString(), "--name", "t", "--data-dir", dir.resolve("data").toString(),
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "t=" + peer,
                "--cert-file", dir.resolve("server.crt").toString(), "--key-file", dir.resolve("server.key").toString(),
                "--trusted-ca-file", caCert.toString(), "--client-cert-auth",
                "--logger", "zap", "--log-outputs", "stderr");
        this.process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile())).start();
        this.hook = new Thread(process::destroyForcibly, "tls-etcd-kill");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Skips the calling test when {@code etcd} or {@code openssl} is missing. */
    static void assumeAvailable() {
        EtcdCluster.assumeAvailable();
        boolean openssl;
        try {
            Process p = new ProcessBuilder("openssl", "version").redirectErrorStream(true).start();
            openssl = p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            openssl = false;
        }
        Assumptions.assumeTrue(openssl, "etcd TLS tests skipped: the openssl binary is not installed (Debian: apt-get "
                + "install openssl), needed to make the test certificates");
    }

    /** Makes the PKI in {@code dir} (must exist), starts the member and waits (45 s at most) until it serves. */
    static TlsEtcd start(Path dir) throws IOException, InterruptedException {
        var etcd = new TlsEtcd(dir);
        try {
            Await.until(() -> {
                if (!etcd.process.isAlive()) {
                    throw new IllegalStateException("etcd exited with " + etcd.process.exitValue() + "; log "
                            + etcd.log() + ":\n" + etcd.logText());
                }
                return etcd.logText().contains("serving client traffic");
            }, Duration.ofSeconds(45), "TLS etcd serving; log " + etcd.log());
            return etcd;
        } catch (RuntimeException | Error e) {
            etcd.close();
            throw e;
        }
    }

    /** @return the client URL, {@code https://127.0.0.1:<port>} */
    URI endpoint() {
        return URI.create("https://127.0.0.1:" + clientPort);
    }

    Path log() {
        return dir.resolve("etcd.log");
    }

    private String logText() {
        try {
            return Files.readString(log());
        } catch (IOException e) {
            return "";
        }
    }

    /** A self-signed CA {@code <name>.crt} / {@code <name>.key}. */
    private Path ca(String name) throws IOException, InterruptedException {
        key(name);
        openssl("req", "-x509", "-new", "-key", name + ".key", "-config", "pki.cnf", "-extensions", "ca",
                "-subj", "/CN=" + name, "-days", "2", "-out", name + ".crt");
        return dir.resolve(name + ".crt");
    }

    /** A certificate {@code <name>.crt} signed by {@code ca}, extensions of section {@code kind}. */
    private Path leaf(String name, String ca, String kind, String cn) throws IOException, InterruptedException {
        key(name);
        openssl("req", "-new", "-key", name + ".key", "-config", "pki.cnf", "-subj", "/CN=" + cn, "-out",
                name + ".csr");
        openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key", "-CAcreateserial",
                "-days", "2", "-extfile", "pki.cnf", "-extensions", kind, "-out", name + ".crt");
        return dir.resolve(name + ".crt");
    }

    private void key(String name) throws IOException, InterruptedException {
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name + ".key");
    }

    private void openssl(String... args) throws IOException, InterruptedException {
        var command = new ArrayList<String>();
        command.add("openssl");
        command.addAll(List.of(args));
        Path out = dir.resolve("openssl.log");
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile())).start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("openssl " + command + " did not end in 30 s");
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException("openssl " + command + " failed with " + p.exitValue() + ":\n"
                    + Files.readString(out));
        }
    }

    private static int freePort() throws IOException {
        try (var socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down
        }
    }
}
