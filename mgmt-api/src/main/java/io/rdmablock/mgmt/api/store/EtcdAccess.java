package io.rdmablock.mgmt.api.store;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContextBuilder;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * How the management server authenticates to etcd and protects the connection: TLS (the CA that signed the members'
 * certificates, and optionally a client certificate for etcd's {@code --client-cert-auth}) and etcd's user/password
 * authentication. Every file is PEM; the password is read from a file (never a command-line value), its content up to
 * the first line end. Options of {@code rdmablock mgmt}: {@code --etcd-ca-cert}, {@code --etcd-cert},
 * {@code --etcd-key}, {@code --etcd-user}, {@code --etcd-password-file} (docs/configuration.md).
 *
 * <p>TLS: with a CA every endpoint must be {@code https://}, and {@code https://} endpoints need the CA. The members'
 * certificates are checked against the host of the first endpoint (jetcd uses one TLS authority for the whole
 * channel), so they must all name it in their subject alternative names (etcd's usual cluster certificate lists
 * every member's name and IP).
 *
 * @param caCert       CA certificate(s), PEM; null: no TLS
 * @param cert         client certificate chain, PEM (leaf first); null: none
 * @param key          private key of {@code cert}, PEM (PKCS#8 unencrypted); with {@code cert} only
 * @param user         etcd user name; null: no authentication
 * @param passwordFile file holding that user's password; with {@code user} only
 */
public record EtcdAccess(Path caCert, Path cert, Path key, String user, Path passwordFile) {
    /** Plain connection, no authentication (the default). */
    public static final EtcdAccess NONE = new EtcdAccess(null, null, null, null, null);

    /**
     * @throws IllegalArgumentException naming the options when {@code cert} and {@code key} are not given together,
     *                                  a client certificate is given without a CA, or {@code user} and
     *                                  {@code passwordFile} are not given together
     */
    public EtcdAccess {
        if ((cert == null) != (key == null)) {
            throw new IllegalArgumentException("invalid etcd TLS options: --etcd-cert and --etcd-key go together, given "
                    + (cert == null ? "--etcd-key only" : "--etcd-cert only"));
        }
        if (cert != null && caCert == null) {
            throw new IllegalArgumentException("invalid etcd TLS options: --etcd-cert needs --etcd-ca-cert (the CA of "
                    + "the etcd members' certificates)");
        }
        if (user != null && user.isBlank()) {
            user = null;
        }
        if ((user == null) != (passwordFile == null)) {
            throw new IllegalArgumentException("invalid etcd authentication options: --etcd-user and "
                    + "--etcd-password-file go together, given "
                    + (user == null ? "--etcd-password-file only" : "--etcd-user only"));
        }
    }

    /** @return true when the connection uses TLS */
    public boolean tls() {
        return caCert != null;
    }

    /**
     * Checks these options against the endpoints' schemes.
     *
     * @throws IllegalArgumentException when an {@code https://} endpoint has no {@code --etcd-ca-cert}, when TLS
     *                                  options are given with {@code http://} endpoints, or when both schemes are mixed
     */
    public void checkEndpoints(List<URI> endpoints) {
        long https = endpoints.stream().filter(u -> "https".equals(u.getScheme())).count();
        if (https > 0 && https < endpoints.size()) {
            throw new IllegalArgumentException("invalid etcd endpoints: " + endpoints + " mix http:// and https://; "
                    + "use https:// for all (with --etcd-ca-cert) or http:// for all");
        }
        if (https > 0 && !tls()) {
            throw new IllegalArgumentException("invalid etcd options: https:// endpoints " + endpoints
                    + " need --etcd-ca-cert (the CA that signed the etcd members' certificates)");
        }
        if (https == 0 && tls()) {
            throw new IllegalArgumentException("invalid etcd options: --etcd-ca-cert"
                    + (cert != null ? " and --etcd-cert" : "") + " given but the endpoints " + endpoints
                    + " are http://; use https:// endpoints");
        }
    }

    /**
     * A jetcd client as {@link EtcdMetadataStore} and {@code io.rdmablock.mgmt.api.ha.Leadership} use it: these
     * options, the {@code hasleader} header on every request, no waiting for a connection inside gRPC (the caller's
     * bound decides), 16 MiB answers.
     *
     * @throws IllegalArgumentException as {@link #checkEndpoints}, and naming the option and the path when a file is
     *                                  missing, unreadable or not PEM, or the certificate and key do not load
     */
    public Client newClient(List<URI> endpoints) {
        checkEndpoints(endpoints);
        ClientBuilder b = Client.builder()
                .endpoints(endpoints.toArray(URI[]::new))
                .header("hasleader", "true")
                .waitForReady(false)
                .connectTimeout(Duration.ofSeconds(2))
                .keepaliveTime(Duration.ofSeconds(5))
                .keepaliveTimeout(Duration.ofSeconds(3))
                .retryMaxDuration(Duration.ofSeconds(2))
                .maxInboundMessageSize(16 * 1024 * 1024);
        if (tls()) {
            pem("--etcd-ca-cert", caCert, "CERTIFICATE");
            if (cert != null) {
                pem("--etcd-cert", cert, "CERTIFICATE");
                pem("--etcd-key", key, "PRIVATE KEY");
            }
            try {
                SslContextBuilder ssl = GrpcSslContexts.forClient().trustManager(caCert.toFile());
                if (cert != null) {
                    ssl.keyManager(cert.toFile(), key.toFile());
                }
                b.sslContext(ssl.build()).authority(endpoints.getFirst().getHost() + ":"
                        + endpoints.getFirst().getPort());
            } catch (SSLException | IllegalArgumentException e) {
                throw new IllegalArgumentException("invalid etcd TLS files (--etcd-ca-cert " + caCert
                        + (cert == null ? "" : ", --etcd-cert " + cert + ", --etcd-key " + key) + "): " + e.getMessage()
                        + " (PEM certificates; the key PKCS#8 unencrypted: openssl pkcs8 -topk8 -nocrypt)", e);
            }
        }
        if (user != null) {
            b.user(ByteSequence.from(user, StandardCharsets.UTF_8))
                    .password(ByteSequence.from(password(), StandardCharsets.UTF_8));
        }
        return b.build();
    }

    /** @return the password: the file's content up to its first line end */
    private String password() {
        String text;
        try {
            text = Files.readString(passwordFile, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("invalid --etcd-password-file " + passwordFile + ": cannot read it ("
                    + e + ")");
        }
        int end = text.indexOf('\n');
        String password = (end < 0 ? text : text.substring(0, end)).replace("\r", "");
        if (password.isEmpty()) {
            throw new IllegalArgumentException("invalid --etcd-password-file " + passwordFile + ": empty first line");
        }
        return password;
    }

    /** Checks that {@code file} is readable and holds a PEM block whose type ends with {@code type}. */
    private static void pem(String option, Path file, String type) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("invalid " + option + " " + file + ": cannot read it (" + e + ")");
        }
        if (!text.matches("(?s).*-----BEGIN [A-Z0-9 ]*" + type + "-----.*")) {
            throw new IllegalArgumentException("invalid " + option + " " + file + ": not PEM (no \"-----BEGIN ..."
                    + type + "-----\" line)");
        }
    }

    @Override
    public String toString() { // names only the files and the user, never the password
        return "EtcdAccess[caCert=" + caCert + ", cert=" + cert + ", key=" + key + ", user=" + user + "]";
    }
}
