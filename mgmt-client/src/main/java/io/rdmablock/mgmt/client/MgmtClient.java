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
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Blocking REST client of the management plane, on the JDK {@link HttpClient}. Thread-safe. Every method throws
 * {@link MgmtException} when a server answers an error (its problem+json) and {@link MgmtUnavailableException} when
 * no server can be reached or none answers within the request timeout. Paths: see the package documentation and
 * {@code /openapi.yaml} on the server.
 *
 * <p>Several management servers (README.md "HA setup"): the client takes a list of base URLs. A call starts with the URL that
 * answered last ({@link #baseUri()}); on a connection failure, a timeout, or a 503
 * {@link ProblemTypes#NO_LEADER} / {@link ProblemTypes#METADATA_UNAVAILABLE} answer it tries the next URL of the
 * list, each URL at most once per call. A {@code 307}/{@code 308} answer (a follower's {@link ProblemTypes#NOT_LEADER}
 * redirect) is followed once, by this client (not the JDK's), with the same method, body and headers, and only when
 * the {@code Location}'s scheme, host and port are those of one of the configured URLs: the token is never sent
 * elsewhere. A second redirect (or one without a Location) is not followed: the next URL is tried, and when nothing
 * answered the call ends in {@link MgmtUnavailableException} (e.g. followers still naming a leader just killed). The whole call, every attempt included, ends within the request timeout: each attempt gets an equal
 * share of what remains among the URLs not yet tried (one URL: the whole timeout, as before).
 */
public final class MgmtClient {
    private static final TypeReference<List<Volume>> VOLUME_LIST = new TypeReference<>() { };
    private static final TypeReference<List<Node>> NODE_LIST = new TypeReference<>() { };
    private static final TypeReference<List<Host>> HOST_LIST = new TypeReference<>() { };
    private static final TypeReference<List<HostCredential>> HOST_CREDENTIAL_LIST = new TypeReference<>() { };

    private final List<URI> baseUris;
    private final AtomicInteger current = new AtomicInteger();
    /** The bearer token; the node agent switches it to the node's credential ({@link #useToken}). */
    private volatile String token;
    private final Duration requestTimeout;
    private final HttpClient http;

    /**
     * @param baseUri        management server root, e.g. {@code http://127.0.0.1:8080} (a trailing slash is ok)
     * @param token          bearer token sent on every request: the cluster token, or the read-only token (then a
     *                       mutating call is 403); null or empty sends none (then every call but health is 401)
     * @param requestTimeout per-call timeout (also the connect timeout)
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
        this(List.of(Objects.requireNonNull(baseUri, "baseUri")), token, requestTimeout, sslContext);
    }

    /**
     * A client of several management servers (see the class documentation for how it picks one).
     *
     * @param baseUris       management server roots, 1..{@value #MAX_URLS}, distinct, each an absolute http(s) URL
     *                       (a trailing slash is ok); the first is tried first
     * @param token          as {@link #MgmtClient(URI, String, Duration)}
     * @param requestTimeout per-call timeout, every attempt and the redirect included
     * @param sslContext     as {@link #MgmtClient(URI, String, Duration, javax.net.ssl.SSLContext)}
     * @throws IllegalArgumentException when the list is empty, too long, or names a URL twice
     */
    public MgmtClient(List<URI> baseUris, String token, Duration requestTimeout, javax.net.ssl.SSLContext sslContext) {
        Objects.requireNonNull(baseUris, "baseUris");
        if (baseUris.isEmpty() || baseUris.size() > MAX_URLS) {
            throw new IllegalArgumentException("invalid management URL list: " + baseUris.size()
                    + " URLs, min=1, max=" + MAX_URLS);
        }
        List<URI> roots = new ArrayList<>();
        for (URI u : baseUris) {
            String base = Objects.requireNonNull(u, "baseUris element").toString();
            URI root = URI.create(base.endsWith("/") ? base.substring(0, base.length() - 1) : base);
            if (roots.contains(root)) {
                throw new IllegalArgumentException("invalid management URL list: " + root + " is listed twice");
            }
            roots.add(root);
        }
        this.baseUris = List.copyOf(roots);
        this.token = token == null || token.isEmpty() ? null : token;
        this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(requestTimeout)
                .version(HttpClient.Version.HTTP_1_1).followRedirects(HttpClient.Redirect.NEVER);
        if (sslContext != null) {
            builder.sslContext(sslContext);
        }
        this.http = builder.build();
    }

    /** A client with a 10 s request timeout. */
    public MgmtClient(URI baseUri, String token) {
        this(baseUri, token, Duration.ofSeconds(10));
    }

    /** Most management URLs one client takes. */
    public static final int MAX_URLS = 16;

    /**
     * Parses the comma-separated form of a management URL list, as in {@code --mgmt-url} and
     * {@code RDMABLOCK_MGMT_URL}: {@code http://10.0.0.1:8080,http://10.0.0.2:8080}. Blanks around elements are
     * ignored.
     *
     * @param option what to name in the error, e.g. {@code "--mgmt-url"}
     * @param value  the list, 1..{@value #MAX_URLS} distinct absolute http(s) URLs with a host
     * @return the URLs in the order given
     * @throws IllegalArgumentException naming {@code option}, the bad element, its position and what is expected
     */
    public static List<URI> parseUrls(String option, String value) {
        String expected = "must be a comma-separated list of absolute http(s) URLs such as "
                + "http://10.0.0.1:8080,http://10.0.0.2:8080";
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("invalid " + option + ": empty, " + expected);
        }
        String[] parts = value.split(",", -1);
        if (parts.length > MAX_URLS) {
            throw new IllegalArgumentException("invalid " + option + ": " + parts.length + " URLs, max=" + MAX_URLS);
        }
        List<URI> out = new ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            String element = parts[i].strip();
            URI uri = null;
            try {
                uri = new URI(element);
            } catch (java.net.URISyntaxException e) {
                // reported below
            }
            if (uri == null || !("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()))
                    || uri.getHost() == null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
                throw new IllegalArgumentException("invalid " + option + ": element " + (i + 1) + " \"" + element
                        + "\" of \"" + value + "\" " + (element.isEmpty() ? "is empty; " : "is not an absolute http(s) "
                        + "URL with a host; ") + expected);
            }
            if (out.contains(uri)) {
                throw new IllegalArgumentException("invalid " + option + ": element " + (i + 1) + " \"" + element
                        + "\" of \"" + value + "\" is listed twice");
            }
            out.add(uri);
        }
        return List.copyOf(out);
    }

    /** @return the server root this client talks to now: the one that answered last (at first the first URL) */
    public URI baseUri() {
        return baseUris.get(current.get());
    }

    /** @return every configured server root, in the order given */
    public List<URI> baseUris() {
        return baseUris;
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
     * {@code PATCH /v1/volumes/{name}} {@code {"requireAuth": on}}: only hosts with a DH-HMAC-CHAP secret may
     * connect (or any host again). Errors 400, 401, 404, 409 (deleting).
     */
    public Volume requireAuth(String name, boolean on) {
        return send("PATCH", "/v1/volumes/" + segment(name), java.util.Map.of("requireAuth", on), Volume.class);
    }

    /**
     * {@code PATCH /v1/volumes/{name}} {@code {"allowedHosts": hosts}}: replaces the allow-list (host NQNs,
     * {@code ["*"]} any host, empty none); applies to Connects after the nodes' next heartbeat. Errors 400, 401,
     * 404, 409 (deleting).
     */
    public Volume allowedHosts(String name, List<String> hosts) {
        return send("PATCH", "/v1/volumes/" + segment(name), java.util.Map.of("allowedHosts", hosts), Volume.class);
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

    /** {@code POST /v1/nodes}: register or re-register a node. Errors 400, 401, 403. */
    public Node registerNode(RegisterNodeRequest request) {
        return registerNodeForCredential(request).node();
    }

    /**
     * {@code POST /v1/nodes} as {@link #registerNode}, with the node credential the answer carries (issued when this
     * client sends the cluster token; docs/authentication.md, "Credentials and scopes"). Errors 400, 401 (a node
     * credential that is not current), 403 (another node's credential).
     */
    public NodeRegistration registerNodeForCredential(RegisterNodeRequest request) {
        String text = exchange("POST", "/v1/nodes", request);
        return new NodeRegistration(Json.read(text, Node.class),
                Json.read(text, NodeRegistration.CredentialOnly.class).credential());
    }

    /** Sends {@code newToken} from the next call on (null or empty: none); the node agent's switch to a credential. */
    void useToken(String newToken) {
        this.token = newToken == null || newToken.isEmpty() ? null : newToken;
    }

    /** @return the bearer token sent now, or null */
    String token() {
        return token;
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

    /**
     * {@code POST /v1/nodes/{nodeId}/rotate-key}: gives the node a new node key (operator); the answer names its
     * fingerprint, never the key. Errors 401, 403, 404, 503.
     */
    public NodeKeyRotation rotateNodeKey(String nodeId) {
        return send("POST", "/v1/nodes/" + segment(nodeId) + "/rotate-key", null, NodeKeyRotation.class);
    }

    /** {@code DELETE /v1/nodes/{nodeId}}: forget the node. Errors 401, 404, 409 while volumes are placed on it. */
    public void removeNode(String nodeId) {
        exchange("DELETE", "/v1/nodes/" + segment(nodeId), null);
    }

    // ---- hosts (DH-HMAC-CHAP secrets; answers never carry a secret) ----

    /** {@code PUT /v1/hosts/{hostNqn}}: sets the host's secrets (201 new, 200 replaced). Errors 400, 401, 403. */
    public Host setHost(String hostNqn, SetHostRequest request) {
        return send("PUT", "/v1/hosts/" + segment(hostNqn), request, Host.class);
    }

    /** {@code GET /v1/hosts}: every host with a secret, ordered by NQN. */
    public List<Host> listHosts() {
        return send("GET", "/v1/hosts", null, HOST_LIST);
    }

    /** {@code GET /v1/hosts/{hostNqn}}. Errors 400, 404 {@link ProblemTypes#HOST_NOT_FOUND}. */
    public Host getHost(String hostNqn) {
        return send("GET", "/v1/hosts/" + segment(hostNqn), null, Host.class);
    }

    /** {@code DELETE /v1/hosts/{hostNqn}}: 204. Errors 400, 401, 403, 404. */
    public void removeHost(String hostNqn) {
        exchange("DELETE", "/v1/hosts/" + segment(hostNqn), null);
    }

    // ---- host credentials (docs/authentication.md, "Credentials and scopes") ----

    /**
     * {@code POST /v1/host-credentials}: issues a host credential for {@code hostNqn} (201); the answer is the only
     * time the credential is shown. Errors 400 (the NQN), 401, 403.
     */
    public IssuedHostCredential issueHostCredential(String hostNqn) {
        return send("POST", "/v1/host-credentials", new IssueHostCredentialRequest(hostNqn),
                IssuedHostCredential.class);
    }

    /** {@code GET /v1/host-credentials}: every host credential, ordered by id (never the credentials). */
    public List<HostCredential> listHostCredentials() {
        return send("GET", "/v1/host-credentials", null, HOST_CREDENTIAL_LIST);
    }

    /** {@code DELETE /v1/host-credentials/{id}}: revokes it (204). Errors 400, 401, 403, 404. */
    public void revokeHostCredential(String id) {
        exchange("DELETE", "/v1/host-credentials/" + segment(id), null);
    }

    /** {@code GET /v1/nodes}: every node, ordered by id. */
    public List<Node> listNodes() {
        return send("GET", "/v1/nodes", null, NODE_LIST);
    }

    /**
     * {@code GET /health}: true when a server answers 200 (the current one first, then the others; the one that
     * answered becomes current). Never throws for down servers: false.
     */
    public boolean health() {
        int start = current.get();
        for (int i = 0; i < baseUris.size(); i++) {
            int index = (start + i) % baseUris.size();
            try {
                HttpResponse<String> response = http.send(request("GET",
                        URI.create(baseUris.get(index) + "/health"), null, requestTimeout),
                        HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    current.set(index);
                    return true;
                }
            } catch (IOException e) {
                // next
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
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
        String json = body == null ? null : Json.write(body);
        long deadline = System.nanoTime() + requestTimeout.toNanos();
        int start = current.get();
        List<Integer> untried = new ArrayList<>();
        for (int i = 0; i < baseUris.size(); i++) {
            untried.add((start + i) % baseUris.size());
        }
        List<String> failures = new ArrayList<>();
        Problem lastProblem = null;
        Throwable lastCause = null;
        boolean redirected = false;
        Integer redirectTo = null;
        URI redirectUri = null;
        while (redirectTo != null || !untried.isEmpty()) {
            int index;
            URI target;
            if (redirectTo != null) {
                index = redirectTo;
                target = redirectUri;
                untried.remove(redirectTo);
                redirectTo = null;
            } else {
                index = untried.removeFirst();
                target = URI.create(baseUris.get(index) + path);
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                failures.add(target + ": not tried, the call's " + requestTimeout.toMillis() + " ms were spent");
                break;
            }
            Duration share = Duration.ofNanos(Math.max(1_000_000L, remaining / (untried.size() + 1)));
            HttpResponse<String> response;
            try {
                response = http.send(request(method, target, json, share),
                        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            } catch (javax.net.ssl.SSLHandshakeException e) {
                failures.add(target + ": " + TlsTrust.explain(e));
                lastCause = e;
                continue;
            } catch (IOException e) {
                failures.add(target + ": " + (e.getCause() instanceof javax.net.ssl.SSLHandshakeException h
                        ? TlsTrust.explain(h) : describe(e, share)));
                lastCause = e;
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new MgmtUnavailableException(method + " " + target + " interrupted", e);
            }
            int status = response.statusCode();
            if (status >= 200 && status < 300) {
                current.set(index);
                return response.body();
            }
            if (status == 307 || status == 308) {
                String location = response.headers().firstValue("Location").orElse(null);
                if (redirected || location == null) {
                    // a follower still naming a leader that did not answer (killed: its election key lives until
                    // the lease TTL): no leader is reachable now, which the caller may retry, as a 503 no-leader
                    failures.add(target + ": " + status + (location == null ? " without Location"
                            : " to " + location + " after a redirect (only one is followed)"));
                    continue;
                }
                URI resolved = target.resolve(location);
                int known = indexOf(resolved);
                if (known < 0) {
                    throw new MgmtException(new Problem(ProblemTypes.NOT_LEADER, "Redirect refused", status,
                            method + " " + target + " was redirected to " + resolved + ", which is not one of the "
                                    + "configured management URLs " + baseUris + "; not followed (the token is "
                                    + "only sent to those): configure the leader's advertised URL", null));
                }
                redirected = true;
                redirectTo = known;
                redirectUri = resolved;
                continue;
            }
            Problem problem = problemOf(response, method + " " + path);
            if (status == 503 && (ProblemTypes.NO_LEADER.equals(problem.type())
                    || ProblemTypes.METADATA_UNAVAILABLE.equals(problem.type()))) {
                failures.add(target + ": " + problem);
                lastProblem = problem;
                continue;
            }
            throw new MgmtException(problem);
        }
        // nothing answered: the next call starts with the next URL
        current.set((start + 1) % baseUris.size());
        String tried = String.join("; ", failures);
        if (lastProblem != null) {
            if (baseUris.size() == 1 && failures.size() == 1) {
                throw new MgmtException(lastProblem);
            }
            throw new MgmtException(new Problem(lastProblem.type(), lastProblem.title(), lastProblem.status(),
                    method + " " + path + " failed on every management URL: " + tried, lastProblem.instance(),
                    lastProblem.needed(), lastProblem.available(), lastProblem.epoch()));
        }
        if (baseUris.size() == 1 && failures.size() == 1) { // "GET http://h:p/v1/x failed: connection refused"
            throw new MgmtUnavailableException(method + " " + failures.getFirst().replaceFirst(": ", " failed: "),
                    lastCause, true);
        }
        throw new MgmtUnavailableException(method + " " + path + " failed on every management URL (" + tried + ")",
                lastCause, true);
    }

    private static String describe(IOException e, Duration timeout) {
        if (e instanceof java.net.http.HttpConnectTimeoutException || e instanceof java.net.http.HttpTimeoutException) {
            return "no answer within " + timeout.toMillis() + " ms";
        }
        if (e instanceof java.net.ConnectException) {
            return "connection refused" + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")");
        }
        return e.toString();
    }

    /** @return the index of the configured URL with the scheme, host and port of {@code uri}, or -1 */
    private int indexOf(URI uri) {
        for (int i = 0; i < baseUris.size(); i++) {
            URI base = baseUris.get(i);
            if (base.getScheme().equalsIgnoreCase(String.valueOf(uri.getScheme()))
                    && base.getHost().equalsIgnoreCase(String.valueOf(uri.getHost()))
                    && port(base) == port(uri)) {
                return i;
            }
        }
        return -1;
    }

    private static int port(URI uri) {
        if (uri.getPort() >= 0) {
            return uri.getPort();
        }
        return "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    private HttpRequest request(String method, URI uri, String json, Duration timeout) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                .timeout(timeout)
                .header("Accept", "application/json, " + Problem.MEDIA_TYPE);
        if (token != null) {
            builder.header("Authorization", "Bearer " + token);
        }
        if (json != null) {
            builder.header("Content-Type", "application/json");
            builder.method(method, HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
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
