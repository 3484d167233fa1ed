package io.rdmablock.mgmt.client;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;

/**
 * Trust for an HTTPS management server whose certificate a private CA signed: {@link #sslContext(Path)} trusts exactly
 * the certificates of one PEM file (no JDK default CAs). The file's path comes from {@code --ca-cert}, the system
 * property {@value #PROPERTY} or the environment variable {@value #ENV}, in that order.
 */
public final class TlsTrust {
    /** Environment variable naming the CA PEM file when no {@code --ca-cert} is given. */
    public static final String ENV = "RDMABLOCK_CA_CERT";
    /** System property naming the CA PEM file (a storage node's {@code --ca-cert} sets it for the process). */
    public static final String PROPERTY = "rdmablock.caCert";

    private TlsTrust() {
    }

    /**
     * @param caPem PEM file with one or more X.509 CA certificates
     * @return a TLS context whose trust is those certificates only (host names are checked by the HTTP client)
     * @throws IllegalArgumentException naming the file when it cannot be read or holds no certificate
     */
    public static SSLContext sslContext(Path caPem) {
        try (InputStream in = Files.newInputStream(caPem)) {
            Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certs.isEmpty()) {
                throw new IllegalArgumentException("invalid CA certificate file " + caPem + ": no certificate in it");
            }
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate c : certs) {
                store.setCertificateEntry("ca" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (IOException e) {
            throw new IllegalArgumentException("invalid CA certificate file " + caPem + ": cannot read it (" + e + ")");
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("invalid CA certificate file " + caPem + ": not PEM X.509 certificates ("
                    + e.getMessage() + ")");
        }
    }

    /**
     * @param caPem the CA file, or null
     * @return {@link #sslContext(Path)} of {@code caPem}, else of {@value #PROPERTY} or {@value #ENV} when set,
     *         else null (JDK defaults)
     */
    public static SSLContext fromOptionOrEnv(Path caPem) {
        if (caPem != null) {
            return sslContext(caPem);
        }
        String env = System.getProperty(PROPERTY, System.getenv(ENV));
        return env == null || env.isBlank() ? null : sslContext(Path.of(env.trim()));
    }

    /** @return a sentence naming the certificate problem of a failed TLS handshake, for an error message */
    static String explain(SSLHandshakeException e) {
        String why = e.getMessage() == null ? e.toString() : e.getMessage();
        Throwable c = e;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        if (c != e && c.getMessage() != null) {
            why = why + " (" + c.getMessage() + ")";
        }
        String lower = why.toLowerCase();
        String hint;
        if (lower.contains("pkix") || lower.contains("certification path") || lower.contains("unable to find valid")) {
            hint = "the server's certificate is not signed by a trusted CA (give its CA with --ca-cert PEM or "
                    + ENV + ")";
        } else if (lower.contains("subject alternative") || lower.contains("no name matching")
                || lower.contains("no subject alternative")) {
            hint = "the server's certificate does not name this host (subject alternative names)";
        } else if (lower.contains("expired") || lower.contains("not yet valid")) {
            hint = "the server's certificate is outside its validity period";
        } else {
            hint = "TLS handshake failed";
        }
        return hint + ": " + why;
    }
}
