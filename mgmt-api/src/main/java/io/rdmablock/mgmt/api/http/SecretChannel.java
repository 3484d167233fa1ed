package io.rdmablock.mgmt.api.http;

import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether secret material (a heartbeat answer's managed host secrets, node key and link secrets) may travel to a node
 * over the connection its request came on (docs/authentication.md, "Secrets only over TLS"): yes over TLS; over plain
 * HTTP only from a loopback address (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104: the node and the server on one
 * machine), or from any address when the operator allowed it ({@code rdmablock mgmt --allow-plaintext-secrets},
 * labs). The address and the TLS state are the TCP connection's own ({@link HttpConnection#remoteAddress()},
 * {@link HttpConnection#isSsl()}), never a {@code Forwarded} or {@code X-Forwarded-For} header: a proxy in front
 * of the server makes every request look like it comes from the proxy, so a proxy on the same machine must speak
 * TLS to the server (or the flag be given). Thread-safe.
 */
final class SecretChannel {
    private static final Logger LOG = LoggerFactory.getLogger(SecretChannel.class);

    private final boolean allowPlaintext;
    /** The reason last logged per node (one WARN per node while its reason stays the same). */
    private final Map<String, String> warned = new ConcurrentHashMap<>();

    /** @param allowPlaintext the operator's {@code --allow-plaintext-secrets} */
    SecretChannel(boolean allowPlaintext) {
        this.allowPlaintext = allowPlaintext;
    }

    /**
     * The decision for one request of node {@code nodeId} on {@code connection}; logs a WARN the first time a node's
     * secrets are withheld for a given reason (again after they were handed out in between).
     *
     * @return null when the secrets may be handed out, else why not (for {@code HeartbeatResponse.secretsWithheld})
     */
    String withheld(String nodeId, HttpConnection connection) {
        String reason = reason(connection.isSsl(), address(connection.remoteAddress()), allowPlaintext, nodeId);
        if (reason == null) {
            warned.remove(nodeId);
        } else if (!reason.equals(warned.put(nodeId, reason))) {
            LOG.warn("secrets of node {} withheld from its heartbeat answers: {}", nodeId, reason);
        }
        return reason;
    }

    /**
     * The rule itself, a pure function.
     *
     * @param tls            the request came over TLS
     * @param remote         the peer's IP address, or null when unknown (not an IP socket): treated as not loopback
     * @param allowPlaintext the operator allowed plain HTTP from any address
     * @param nodeId         who asks (named in the reason)
     * @return null when allowed; else the reason, naming the node, its address and both ways out
     */
    static String reason(boolean tls, InetAddress remote, boolean allowPlaintext, String nodeId) {
        if (tls || allowPlaintext || (remote != null && remote.isLoopbackAddress())) {
            return null;
        }
        return "the management server has no TLS (--tls-cert) and node " + nodeId + " connects over "
                + (remote == null ? "an unknown address" : remote.getHostAddress()) + ", not loopback: its node key, "
                + "peer link secrets and the hosts' DH-HMAC-CHAP secrets are not sent in clear, so this node cannot "
                + "admit hosts that need managed secrets nor serve as a replication peer until the server serves "
                + "HTTPS (rdmablock mgmt --tls-cert/--tls-key, node --ca-cert) or, in a lab, runs with "
                + "--allow-plaintext-secrets";
    }

    /** @return the IP address of {@code a}, parsed without a name lookup; null when it is not an IP literal */
    static InetAddress address(SocketAddress a) {
        if (a == null || a.hostAddress() == null) {
            return null;
        }
        try {
            return InetAddress.ofLiteral(a.hostAddress());
        } catch (IllegalArgumentException notALiteral) {
            return null;
        }
    }
}
