package io.rdmablock.mgmt.api.http;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How the management HTTP server authenticates and listens.
 *
 * @param adminToken       the cluster bearer token (non-empty): every route
 * @param readToken        a read-only bearer token (GET and HEAD routes only), or null for none: then reads need the
 *                         admin token too; non-empty and different from the admin token (see {@link BearerAuth})
 * @param tlsCert          PEM file of the server certificate (chain, leaf first), or null for plain HTTP; given
 *                         together with {@code tlsKey}
 * @param tlsKey           PEM file of the server's private key (PKCS#8 or PKCS#1, unencrypted), or null
 * @param idleTimeoutMs    a connection that sends and receives nothing for this long is closed, ms, &gt; 0
 * @param requestTimeoutMs a connection whose first request's headers, or a request whose body, have not arrived whole
 *                         within this is closed (the body case answered 408 first), ms, &gt; 0 (see
 *                         {@link HttpFaults})
 * @param allowPlaintextSecrets hand secret material (heartbeat answers: managed host secrets, node key, link secrets)
 *                         to a node over plain HTTP from any address, not only loopback ({@link SecretChannel}): for
 *                         labs, since anyone on the path then reads every secret; meaningless with TLS
 */
public record MgmtHttpOptions(String adminToken, String readToken, Path tlsCert, Path tlsKey, long idleTimeoutMs,
                              long requestTimeoutMs, boolean allowPlaintextSecrets) {
    /**
     * Default idle timeout, ms: 60 s, above the JDK HTTP client's keep-alive of 30 s, so a pooled client connection
     * is dropped by the client first and never reused just as the server closes it.
     */
    public static final long DEFAULT_IDLE_TIMEOUT_MS = 60_000;
    /** Default request timeout, ms (a 64 KiB body needs a fraction of it on any working link). */
    public static final long DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
    /** Largest accepted timeout, ms (1 hour). */
    public static final long MAX_TIMEOUT_MS = 3_600_000;

    /** @throws IllegalArgumentException naming the field on a value outside the bounds above */
    public MgmtHttpOptions {
        Objects.requireNonNull(adminToken, "adminToken");
        if (adminToken.isEmpty()) {
            throw new IllegalArgumentException("invalid token: token=\"\", min length=1");
        }
        if (readToken != null && readToken.isEmpty()) {
            throw new IllegalArgumentException("invalid readToken: readToken=\"\", min length=1");
        }
        if (adminToken.equals(readToken)) {
            throw new IllegalArgumentException("invalid readToken: equal to the cluster token, must differ");
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new IllegalArgumentException("invalid TLS: tlsCert=" + tlsCert + ", tlsKey=" + tlsKey
                    + ", both or neither");
        }
        check("idleTimeoutMs", idleTimeoutMs);
        check("requestTimeoutMs", requestTimeoutMs);
    }

    private static void check(String field, long ms) {
        if (ms < 1 || ms > MAX_TIMEOUT_MS) {
            throw new IllegalArgumentException("invalid " + field + ": " + field + "=" + ms + ", min=1, max="
                    + MAX_TIMEOUT_MS);
        }
    }

    /** @return options with only the admin token: no read token, plain HTTP, default timeouts */
    public static MgmtHttpOptions of(String adminToken) {
        return new MgmtHttpOptions(adminToken, null, null, null, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS,
                false);
    }

    /** @return these options with the read-only token {@code readToken} (null: none) */
    public MgmtHttpOptions withReadToken(String readToken) {
        return new MgmtHttpOptions(adminToken, readToken, tlsCert, tlsKey, idleTimeoutMs, requestTimeoutMs,
                allowPlaintextSecrets);
    }

    /** @return these options with TLS from the PEM files {@code cert} and {@code key} (both null: plain HTTP) */
    public MgmtHttpOptions withTls(Path cert, Path key) {
        return new MgmtHttpOptions(adminToken, readToken, cert, key, idleTimeoutMs, requestTimeoutMs,
                allowPlaintextSecrets);
    }

    /** @return these options with the given idle and request timeouts, ms */
    public MgmtHttpOptions withTimeouts(long idleTimeoutMs, long requestTimeoutMs) {
        return new MgmtHttpOptions(adminToken, readToken, tlsCert, tlsKey, idleTimeoutMs, requestTimeoutMs,
                allowPlaintextSecrets);
    }

    /** @return these options with {@code allowPlaintextSecrets} set to {@code allow} (labs only; see above) */
    public MgmtHttpOptions withPlaintextSecrets(boolean allow) {
        return new MgmtHttpOptions(adminToken, readToken, tlsCert, tlsKey, idleTimeoutMs, requestTimeoutMs, allow);
    }

    /** @return whether the server speaks TLS */
    public boolean tls() {
        return tlsCert != null;
    }

    /** Never prints a token. */
    @Override
    public String toString() {
        return "MgmtHttpOptions[readToken=" + (readToken == null ? "none" : "set") + ", tlsCert=" + tlsCert
                + ", tlsKey=" + tlsKey + ", idleTimeoutMs=" + idleTimeoutMs + ", requestTimeoutMs="
                + requestTimeoutMs + ", allowPlaintextSecrets=" + allowPlaintextSecrets + "]";
    }
}
