package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.core.JsonProcessingException;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Blocking REST client of the management server, on the JDK {@link HttpClient}. Thread-safe; one instance per
 * server. Every method throws {@link MgmtException} when the server answers an error (its problem+json) and
 * {@link MgmtUnavailableException} when the server cannot be reached or does not answer within the request
 * timeout. Paths: see the package documentation and {@code /openapi.yaml} on the server.
 */
public final class MgmtClient {
    private static final TypeReference<List<Volume>> VOLUME_LIST = new TypeReference<>() { };
    private static final TypeReference<List<Node>> NODE_LIST = new TypeReference<>() { };

    private final URI baseUri;
    private final String token;
    private final Duration requestTimeout;
    private final HttpClient http;

    /**
     * @param baseUri        management server root, e.g. {@code http://127.0.0.1:8080} (a trailing slash is ok)
     * @param token          bearer token sent on every request: the cluster token, or the read-only token (then a
     *                       mutating call is 403); null or empty sends none (then every call but health is 401)
     * @param requestTimeout per-request timeout (also the connect timeout)
     */
    public MgmtClient(URI baseUri, String token, Duration requestTimeout) {
        this(baseUri, token, requestTimeout, null);
    }

    /**
     * @param sslContext TLS trust for an {@code https} server (e.g. {@link TlsTrust#sslContext}), or null for the
     *                   JDK's default trust; a handshake failure is a {@link MgmtUnavailableException} naming the
     *                   certificate problem
     */
    public MgmtClient(URI baseUri, String token, Duration requestTimeout, javax.net.ssl.SSLContext sslContext) {
        Objects.requireNonNull(baseUri, "baseUri");
        String base = baseUri.toString();
        this.baseUri = URI.create(base.endsWith("/") ? base.substring(0, base.length() - 1) : base);
        this.token = token == null || token.isEmpty() ? null : token;
        this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(requestTimeout)
                .version(HttpClient.Version.HTTP_1_1);
        if (sslContext != null) {
            builder.sslContext(sslContext);
        }
        this.http = builder.build();
    }

    /** A client with a 10 s request timeout. */
    public MgmtClient(URI baseUri, String token) {
        this(baseUri, token, Duration.ofSeconds(10));
    }

    /** @return the server root this client talks to */
    public URI baseUri() {
        return baseUri;
    }

    // ---- volumes ----

    /** {@code POST /v1/volumes}: 201 + the new volume (state creating). Errors 400, 401, 409 (exists, no capacity). */
    public Volume createVolume(CreateVolumeRequest request) {
        return send("POST", "/v1/volumes", request, Volume.class);
    }

    /** {@code GET /v1/volumes}: every volume, ordered by name. */
    public List<Volume> listVolumes() {
        return send("GET", "/v1/volumes", null, VOLUME_LIST);
    }

    /** {@code GET /v1/volumes/{name}}. Errors 404. */
    public Volume getVolume(String name) {
        return send("GET", "/v1/volumes/" + segment(name), null, Volume.class);
    }

    /** {@code PATCH /v1/volumes/{name}} (grow only). Errors 400 (shrink, bounds), 401, 404, 409 (deleting). */
    public Volume resizeVolume(String name, long sizeBytes) {
        return send("PATCH", "/v1/volumes/" + segment(name), new ResizeVolumeRequest(sizeBytes), Volume.class);
    }

    /**
     * {@code DELETE /v1/volumes/{name}[?force=true]}: 202 + the volume in state deleting (the node removes it).
     * Errors 401, 404, 409 when a host is connected and not forced.
     */
    public Volume deleteVolume(String name, boolean force) {
        return send("DELETE", "/v1/volumes/" + segment(name) + (force ? "?force=true" : ""), null, Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{volume}/copies/{nodeId}/stale}: the primary {@code reporter} drops secondary
     * {@code nodeId} from the in-sync set under {@code epoch}; answers the volume (epoch + 1, that copy stale), or
     * the current volume when the copy is already stale. Errors 400 (epoch &lt; 1, bad names), 401, 404 (volume),
     * 409 {@link ProblemTypes#EPOCH_MISMATCH} (see {@link Problem#epoch()}), {@link ProblemTypes#NOT_PRIMARY},
     * {@link ProblemTypes#NOT_A_SECONDARY}.
     */
    public Volume markCopyStale(String volume, String nodeId, long epoch, String reporter) {
        return send("POST", "/v1/volumes/" + segment(volume) + "/copies/" + segment(nodeId) + "/stale",
                new MarkCopyStaleRequest(epoch, reporter), Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{volume}/copies/{nodeId}/syncing}: the primary {@code reporter} starts resyncing the
     * stale copy on {@code nodeId} (docs/resync.md); the epoch does not change. Answers the volume (that copy
     * {@code syncing}), or the current volume when it already is. Errors 400, 401, 404, 409
     * {@link ProblemTypes#EPOCH_MISMATCH}, {@link ProblemTypes#NOT_PRIMARY}, {@link ProblemTypes#NOT_A_SECONDARY},
     * {@link ProblemTypes#COPY_NOT_STALE}.
     */
    public Volume markCopySyncing(String volume, String nodeId, long epoch, String reporter) {
        return send("POST", "/v1/volumes/" + segment(volume) + "/copies/" + segment(nodeId) + "/syncing",
                new CopyTransition(epoch, reporter), Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{volume}/copies/{nodeId}/in-sync}: the primary {@code reporter} finished resyncing the
     * copy on {@code nodeId}; answers the volume with epoch + 1 and that copy {@code in_sync} (docs/resync.md), or the
     * current volume when it already is. Errors 400, 401, 404, 409 {@link ProblemTypes#EPOCH_MISMATCH},
     * {@link ProblemTypes#NOT_PRIMARY}, {@link ProblemTypes#NOT_A_SECONDARY}, {@link ProblemTypes#COPY_NOT_SYNCING}.
     */
    public Volume markCopyInSync(String volume, String nodeId, long epoch, String reporter) {
        return send("POST", "/v1/volumes/" + segment(volume) + "/copies/" + segment(nodeId) + "/in-sync",
                new CopyTransition(epoch, reporter), Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{name}/verify}: asks the primary to compare every copy (docs/resync.md, "Verify");
     * answers 202 with the run, state pending (a run already pending or running is answered as it is). Errors 401,
     * 404, 409 {@link ProblemTypes#VOLUME_NOT_READY} (no primary, or fewer than two copies to compare).
     */
    public VerifyReport startVerify(String volume) {
        return send("POST", "/v1/volumes/" + segment(volume) + "/verify", null, VerifyReport.class);
    }

    /** {@code GET /v1/volumes/{name}/verify}: the latest verify run. Errors 401, 404 (volume, or no run yet). */
    public VerifyReport verifyStatus(String volume) {
        return send("GET", "/v1/volumes/" + segment(volume) + "/verify", null, VerifyReport.class);
    }

    /**
     * {@code POST /v1/volumes/{name}/copies/{nodeId}/unreachable}: reports that the copy on {@code nodeId} does not
     * answer {@code reporter} (docs/failover.md). Answers the volume as the server has it after the report. Errors 400,
     * 401, 404 (volume or copy unknown).
     */
    public Volume reportUnreachable(String volume, String nodeId, long epoch, String reporter) {
        return send("POST", "/v1/volumes/" + segment(volume) + "/copies/" + segment(nodeId) + "/unreachable",
                new UnreachableReport(epoch, reporter), Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{name}/promote}: makes the copy on {@code nodeId} the primary (operator action,
     * docs/failover.md); {@code acceptDataLoss} is required when that copy is not in sync. Errors 400, 401, 404,
     * 409 (primary still alive, or data loss not accepted).
     */
    public Volume promoteVolume(String volume, String nodeId, boolean acceptDataLoss) {
        return send("POST", "/v1/volumes/" + segment(volume) + "/promote", new PromoteRequest(nodeId, acceptDataLoss),
                Volume.class);
    }

    // ---- nodes ----

    /** {@code POST /v1/nodes}: register or re-register a node. Errors 400, 401. */
    public Node registerNode(RegisterNodeRequest request) {
        return send("POST", "/v1/nodes", request, Node.class);
    }

    /** {@code POST /v1/nodes/{nodeId}/heartbeat}: report, get the desired state. Errors 400, 401, 404. */
    public HeartbeatResponse heartbeat(String nodeId, HeartbeatRequest request) {
        return send("POST", "/v1/nodes/" + segment(nodeId) + "/heartbeat", request, HeartbeatResponse.class);
    }

    /** {@code POST /v1/nodes/{nodeId}/drain}: no new volumes go to the node. Errors 401, 404. */
    public Node drainNode(String nodeId) {
        return send("POST", "/v1/nodes/" + segment(nodeId) + "/drain", null, Node.class);
    }

    /** {@code POST /v1/nodes/{nodeId}/undrain}: volumes may be placed on the node again. Errors 401, 404. */
    public Node undrainNode(String nodeId) {
        return send("POST", "/v1/nodes/" + segment(nodeId) + "/undrain", null, Node.class);
    }

    /** {@code DELETE /v1/nodes/{nodeId}}: forget the node. Errors 401, 404, 409 while volumes are placed on it. */
    public void removeNode(String nodeId) {
        exchange("DELETE", "/v1/nodes/" + segment(nodeId), null);
    }

    /** {@code GET /v1/nodes}: every node, ordered by id. */
    public List<Node> listNodes() {
        return send("GET", "/v1/nodes", null, NODE_LIST);
    }

    /** {@code GET /health}: true when the server answers 200. Never throws for a down server: false. */
    public boolean health() {
        try {
            HttpResponse<String> response = http.send(request("GET", "/health", null),
                    HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    // ---- transport ----

    private <T> T send(String method, String path, Object body, Class<T> type) {
        String text = exchange(method, path, body);
        return Json.read(text, type);
    }

    private <T> T send(String method, String path, Object body, TypeReference<T> type) {
        String text = exchange(method, path, body);
        try {
            return Json.MAPPER.readValue(text, type);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("invalid JSON answer to " + method + " " + path + ": "
                    + e.getOriginalMessage(), e);
        }
    }

    private String exchange(String method, String path, Object body) {
        HttpRequest request = request(method, path, body);
        HttpResponse<String> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (javax.net.ssl.SSLHandshakeException e) {
            throw new MgmtUnavailableException(method + " " + request.uri() + " failed: "
                    + TlsTrust.explain(e), e);
        } catch (IOException e) {
            if (e.getCause() instanceof javax.net.ssl.SSLHandshakeException h) {
                throw new MgmtUnavailableException(method + " " + request.uri() + " failed: "
                        + TlsTrust.explain(h), e);
            }
            throw new MgmtUnavailableException(method + " " + request.uri() + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MgmtUnavailableException(method + " " + request.uri() + " interrupted", e);
        }
        int status = response.statusCode();
        if (status >= 200 && status < 300) {
            return response.body();
        }
        throw new MgmtException(problemOf(response, method + " " + path));
    }

    private HttpRequest request(String method, String path, Object body) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(baseUri + path))
                .timeout(requestTimeout)
                .header("Accept", "application/json, " + Problem.MEDIA_TYPE);
        if (token != null) {
            builder.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            builder.header("Content-Type", "application/json");
            builder.method(method, HttpRequest.BodyPublishers.ofString(Json.write(body), StandardCharsets.UTF_8));
        } else {
            builder.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return builder.build();
    }

    /** Decodes a problem answer; a non-problem error body becomes a problem of type {@link ProblemTypes#INTERNAL}. */
    static Problem problemOf(HttpResponse<String> response, String what) {
        String contentType = response.headers().firstValue("Content-Type").orElse("");
        if (contentType.startsWith(Problem.MEDIA_TYPE) || contentType.startsWith("application/json")) {
            try {
                Problem p = Json.MAPPER.readValue(response.body(), Problem.class);
                if (p.type() != null) {
                    return p.status() == 0 ? p.withStatus(response.statusCode()) : p;
                }
            } catch (JsonProcessingException ignored) {
                // fall through: not a problem document
            }
        }
        String body = response.body() == null ? "" : response.body();
        return new Problem(ProblemTypes.INTERNAL, "Unexpected answer", response.statusCode(),
                what + " answered " + response.statusCode() + " without problem+json: "
                        + body.substring(0, Math.min(body.length(), 200)), null);
    }

    private static String segment(String value) {
        return URLEncoder.encode(Objects.requireNonNull(value, "path segment"), StandardCharsets.UTF_8)
                .replace("+", "%20");
    }
}
