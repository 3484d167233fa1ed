package io.rdmablock.mgmt.api.store;

import io.etcd.jetcd.common.exception.ClosedClientException;
import io.grpc.Status;

import javax.net.ssl.SSLException;
import java.net.URI;
import java.security.cert.CertificateException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How {@link EtcdMetadataStore} calls etcd and reads its failures: the bounded wait of a call, which failures mean
 * "etcd cannot answer now" ({@link MetadataStoreUnavailableException}, REST 503) and which mean "etcd refuses this
 * server for good" (a failed TLS handshake, a refused user or password), and the endpoint syntax.
 */
final class EtcdCalls {
    private EtcdCalls() {
    }

    /** @see EtcdMetadataStore.Config#parseEndpoints(String) */
    static List<URI> parseEndpoints(String commaSeparated) {
        var out = new ArrayList<URI>();
        for (String part : Objects.requireNonNull(commaSeparated, "endpoints").split(",")) {
            String s = part.trim();
            if (s.isEmpty()) {
                continue;
            }
            URI uri;
            try {
                uri = URI.create(s);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("invalid etcd endpoint: endpoint=\"" + s + "\", " + e.getMessage());
            }
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null
                    || uri.getPort() < 0) {
                throw new IllegalArgumentException("invalid etcd endpoint: endpoint=\"" + s
                        + "\", must be http://HOST:PORT or https://HOST:PORT");
            }
            out.add(uri);
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("invalid etcd endpoints: \"" + commaSeparated
                    + "\", must name at least one URL");
        }
        return List.copyOf(out);
    }

    /**
     * Waits for a call within {@link EtcdMetadataStore.Config#callTimeout()}.
     *
     * @throws MetadataStoreUnavailableException when it times out, is interrupted or etcd is unavailable
     * @throws MetadataStoreException            on any other failure
     */
    static <T> T await(EtcdMetadataStore.Config config, String what, CompletableFuture<T> call) {
        long timeoutMs = config.callTimeout().toMillis();
        try {
            return call.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            call.cancel(true);
            throw new MetadataStoreUnavailableException(what + " failed: etcd " + config.endpoints()
                    + " did not answer within " + timeoutMs + " ms (no quorum, or unreachable)", e);
        } catch (InterruptedException e) {
            call.cancel(true);
            Thread.currentThread().interrupt();
            throw new MetadataStoreUnavailableException(what + " interrupted", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (isUnavailable(cause)) {
                throw new MetadataStoreUnavailableException(what + " failed: etcd " + config.endpoints()
                        + " unavailable: " + cause.getMessage(), cause);
            }
            throw new MetadataStoreException(what + " failed: " + cause, cause);
        }
    }

    /** @return true for failures that say "etcd cannot answer now" rather than "this request is wrong" */
    static boolean isUnavailable(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ClosedClientException || t instanceof TimeoutException) {
                return true;
            }
            Status status = Status.fromThrowable(t);
            switch (status.getCode()) {
                case UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, ABORTED -> {
                    return true;
                }
                default -> {
                }
            }
            String message = String.valueOf(t.getMessage());
            if (message.contains("etcdserver: no leader") || message.contains("etcdserver: request timed out")
                    || message.contains("etcdserver: leader changed") || message.contains("etcdserver: too many requests")
                    || message.contains("io exception") || message.contains("Connection refused")) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /**
     * At open: turns a failure that retrying cannot cure into a clear {@link MetadataStoreException} naming the
     * options to check: a TLS handshake that failed (no or a wrong client certificate, an untrusted or misnamed server
     * certificate, TLS against a plain member) or etcd's refusal of the user or password. Returns when it is neither.
     */
    static void throwIfRefused(EtcdMetadataStore.Config config, RuntimeException failure) {
        EtcdAccess access = config.access();
        for (Throwable t = failure; t != null && t.getCause() != t; t = t.getCause()) {
            String m = String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT);
            if (t instanceof SSLException || t instanceof CertificateException || m.contains("ssl")
                    || m.contains("handshake") || m.contains("certificate")) {
                throw new MetadataStoreException("TLS with etcd " + config.endpoints() + " failed (" + root(failure)
                        + "); check " + (access.tls() ? "--etcd-ca-cert " + access.caCert() + (access.cert() == null
                        ? " (no --etcd-cert/--etcd-key given: a member started with --client-cert-auth needs them)"
                        : ", --etcd-cert " + access.cert() + ", --etcd-key " + access.key())
                        + " and that the members' certificates name " + config.endpoints().getFirst().getHost()
                        : "the endpoints' scheme (a TLS member needs https:// and --etcd-ca-cert)"), failure);
            }
            if (m.contains("authentication failed") || m.contains("invalid user id or password")
                    || m.contains("user name not found") || m.contains("invalid auth token")
                    || m.contains("user name is empty") || m.contains("permission denied")
                    || Status.fromThrowable(t).getCode() == Status.Code.UNAUTHENTICATED) {
                throw new MetadataStoreException("etcd " + config.endpoints() + " refused "
                        + (access.user() == null ? "the request without a user (its authentication is enabled): give "
                        + "--etcd-user and --etcd-password-file"
                        : "--etcd-user " + access.user() + " with the password of --etcd-password-file "
                        + access.passwordFile() + " (wrong user or password, or the user lacks a role on the prefix "
                        + config.prefix() + ")") + " (" + root(failure) + ")", failure);
            }
        }
    }

    /** @return the first line of the innermost cause, with its class */
    private static String root(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String text = t.getClass().getSimpleName() + ": " + t.getMessage();
        int end = text.indexOf('\n');
        return end < 0 ? text : text.substring(0, end);
    }
}
