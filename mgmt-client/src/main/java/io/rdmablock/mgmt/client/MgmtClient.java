package io.rdmablock.mgmt.client;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Blocking REST client of the management plane, on the JDK {@link java.net.http.HttpClient}. Thread-safe. Every method throws
 * {@link MgmtException} when a server answers an error (its problem+json) and {@link MgmtUnavailableException} when
 * no server can be reached or none answers within the request timeout. Paths: see the package documentation and
 * {@code /openapi.yaml} on the server.
 *
 * <p>Several management servers (docs/ha.md): the client takes a list of base URLs. A call starts with the URL that
 * answered last ({@link #baseUri()}); on a connection failure, a timeout, or a 503
 * {@link ProblemTypes#NO_LEADER} / {@link ProblemTypes#METADATA_UNAVAILABLE} answer it tries the next URL of the
 * list, each URL at most once per call. A {@code 307}/{@code 308} answer (a follower's {@link ProblemTypes#NOT_LEADER}
 * redirect) is followed once, by this client (not the JDK's), with the same method, body and headers, and only when
 * the {@code Location}'s scheme, host and port are those of one of the configured URLs: the token is never sent
 * elsewhere. A second redirect (or one without a Location) is not followed: the next URL is tried, and when nothing
 * answered the call ends in {@link MgmtUnavailableException} (e.g. followers still naming a leader just killed). The whole call, every attempt included, ends within the request timeout: each attempt gets an equal
 * share of what remains among the URLs not yet tried (one URL: the whole timeout, as before).
 *
 * <p>The calls are grouped by resource in {@link VolumeClient} ({@link #volumes()}), {@link NodeClient}
 * ({@link #nodes()}) and {@link HostClient} ({@link #hosts()}), which share this client's servers, token and
 * timeout; each call is also a method of this class, delegating to them. The exchange itself is
 * {@code MgmtTransport}'s.
 */
public final class MgmtClient {
    private final MgmtTransport transport;
    private final VolumeClient volumes;
    private final NodeClient nodes;
    private final HostClient hosts;

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
        this.transport = new MgmtTransport(baseUris, token, requestTimeout, sslContext);
        this.volumes = new VolumeClient(transport);
        this.nodes = new NodeClient(transport);
        this.hosts = new HostClient(transport);
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
        return transport.baseUri();
    }

    /** @return every configured server root, in the order given */
    public List<URI> baseUris() {
        return transport.baseUris();
    }

    /** @return the volume calls ({@code /v1/volumes}) on this client's servers */
    public VolumeClient volumes() {
        return volumes;
    }

    /** @return the node calls ({@code /v1/nodes}) on this client's servers */
    public NodeClient nodes() {
        return nodes;
    }

    /** @return the host secret and host credential calls ({@code /v1/hosts}, {@code /v1/host-credentials}) */
    public HostClient hosts() {
        return hosts;
    }

    /** Sends {@code newToken} from the next call on (null or empty: none); the node agent's switch to a credential. */
    void useToken(String newToken) {
        transport.useToken(newToken);
    }

    /** @return the bearer token sent now, or null */
    String token() {
        return transport.token();
    }

    /**
     * {@code GET /health}: true when a server answers 200 (the current one first, then the others; the one that
     * answered becomes current). Never throws for down servers: false.
     */
    public boolean health() {
        return transport.health();
    }

    /**
     * {@code GET /v1/leader}: who leads, which server answered and whether it reads its metadata store (any server
     * answers; the read token suffices). Errors 401; 404 from servers without the route.
     */
    public Leader leader() {
        return transport.send("GET", "/v1/leader", null, Leader.class);
    }

    // ---- volumes (VolumeClient) ----

    /** {@link VolumeClient#createVolume(CreateVolumeRequest)}. */
    public Volume createVolume(CreateVolumeRequest request) {
        return volumes.createVolume(request);
    }

    /** {@link VolumeClient#listVolumes()}. */
    public List<Volume> listVolumes() {
        return volumes.listVolumes();
    }

    /** {@link VolumeClient#getVolume(String)}. */
    public Volume getVolume(String name) {
        return volumes.getVolume(name);
    }

    /** {@link VolumeClient#resizeVolume(String,long)}. */
    public Volume resizeVolume(String name, long sizeBytes) {
        return volumes.resizeVolume(name, sizeBytes);
    }

    /** {@link VolumeClient#requireAuth(String,boolean)}. */
    public Volume requireAuth(String name, boolean on) {
        return volumes.requireAuth(name, on);
    }

    /** {@link VolumeClient#allowedHosts(String,List)}. */
    public Volume allowedHosts(String name, List<String> hosts) {
        return volumes.allowedHosts(name, hosts);
    }

    /** {@link VolumeClient#setQos(String,VolumeQos)}. */
    public Volume setQos(String name, VolumeQos limits) {
        return volumes.setQos(name, limits);
    }

    /** {@link VolumeClient#deleteVolume(String,boolean)}. */
    public Volume deleteVolume(String name, boolean force) {
        return volumes.deleteVolume(name, force);
    }

    /** {@link VolumeClient#markCopyStale(String,String,long,String)}. */
    public Volume markCopyStale(String volume, String nodeId, long epoch, String reporter) {
        return volumes.markCopyStale(volume, nodeId, epoch, reporter);
    }

    /** {@link VolumeClient#markCopySyncing(String,String,long,String)}. */
    public Volume markCopySyncing(String volume, String nodeId, long epoch, String reporter) {
        return volumes.markCopySyncing(volume, nodeId, epoch, reporter);
    }

    /** {@link VolumeClient#markCopyInSync(String,String,long,String)}. */
    public Volume markCopyInSync(String volume, String nodeId, long epoch, String reporter) {
        return volumes.markCopyInSync(volume, nodeId, epoch, reporter);
    }

    /** {@link VolumeClient#startVerify(String)}. */
    public VerifyReport startVerify(String volume) {
        return volumes.startVerify(volume);
    }

    /** {@link VolumeClient#startVerify(String, String)}. */
    public VerifyReport startVerify(String volume, String snapshot) {
        return volumes.startVerify(volume, snapshot);
    }

    /** {@link VolumeClient#verifyStatus(String)}. */
    public VerifyReport verifyStatus(String volume) {
        return volumes.verifyStatus(volume);
    }

    /** {@link VolumeClient#reportUnreachable(String,String,long,String)}. */
    public Volume reportUnreachable(String volume, String nodeId, long epoch, String reporter) {
        return volumes.reportUnreachable(volume, nodeId, epoch, reporter);
    }

    /** {@link VolumeClient#promoteVolume(String,String,boolean)}. */
    public Volume promoteVolume(String volume, String nodeId, boolean acceptDataLoss) {
        return volumes.promoteVolume(volume, nodeId, acceptDataLoss);
    }

    /** {@link VolumeClient#createSnapshot(String,String)}. */
    public Snapshot createSnapshot(String volume, String name) {
        return volumes.createSnapshot(volume, name);
    }

    /** {@link VolumeClient#listSnapshots(String)}. */
    public List<Snapshot> listSnapshots(String volume) {
        return volumes.listSnapshots(volume);
    }

    /** {@link VolumeClient#getSnapshot(String,String)}. */
    public Snapshot getSnapshot(String volume, String name) {
        return volumes.getSnapshot(volume, name);
    }

    /** {@link VolumeClient#deleteSnapshot(String,String)}. */
    public java.util.Optional<Snapshot> deleteSnapshot(String volume, String name) {
        return volumes.deleteSnapshot(volume, name);
    }

    /** {@link VolumeClient#rollback(String,String,boolean)}. */
    public Volume rollback(String volume, String snapshot, boolean force) {
        return volumes.rollback(volume, snapshot, force);
    }

    // ---- nodes (NodeClient) ----

    /** {@link NodeClient#registerNode(RegisterNodeRequest)}. */
    public Node registerNode(RegisterNodeRequest request) {
        return nodes.registerNode(request);
    }

    /** {@link NodeClient#registerNodeForCredential(RegisterNodeRequest)}. */
    public NodeRegistration registerNodeForCredential(RegisterNodeRequest request) {
        return nodes.registerNodeForCredential(request);
    }

    /** {@link NodeClient#heartbeat(String,HeartbeatRequest)}. */
    public HeartbeatResponse heartbeat(String nodeId, HeartbeatRequest request) {
        return nodes.heartbeat(nodeId, request);
    }

    /** {@link NodeClient#drainNode(String)}. */
    public Node drainNode(String nodeId) {
        return nodes.drainNode(nodeId);
    }

    /** {@link NodeClient#undrainNode(String)}. */
    public Node undrainNode(String nodeId) {
        return nodes.undrainNode(nodeId);
    }

    /** {@link NodeClient#rotateNodeKey(String)}. */
    public NodeKeyRotation rotateNodeKey(String nodeId) {
        return nodes.rotateNodeKey(nodeId);
    }

    /** {@link NodeClient#removeNode(String)}. */
    public void removeNode(String nodeId) {
        nodes.removeNode(nodeId);
    }

    /** {@link NodeClient#getNode(String)}. */
    public Node getNode(String nodeId) {
        return nodes.getNode(nodeId);
    }

    /** {@link NodeClient#setNodeBackground(String, NodeBackground)}. */
    public Node setNodeBackground(String nodeId, NodeBackground background) {
        return nodes.setNodeBackground(nodeId, background);
    }

    /** {@link NodeClient#listNodes()}. */
    public List<Node> listNodes() {
        return nodes.listNodes();
    }

    // ---- hosts and host credentials (HostClient) ----

    /** {@link HostClient#setHost(String,SetHostRequest)}. */
    public Host setHost(String hostNqn, SetHostRequest request) {
        return hosts.setHost(hostNqn, request);
    }

    /** {@link HostClient#listHosts()}. */
    public List<Host> listHosts() {
        return hosts.listHosts();
    }

    /** {@link HostClient#getHost(String)}. */
    public Host getHost(String hostNqn) {
        return hosts.getHost(hostNqn);
    }

    /** {@link HostClient#removeHost(String)}. */
    public void removeHost(String hostNqn) {
        hosts.removeHost(hostNqn);
    }

    /** {@link HostClient#issueHostCredential(String)}. */
    public IssuedHostCredential issueHostCredential(String hostNqn) {
        return hosts.issueHostCredential(hostNqn);
    }

    /** {@link HostClient#listHostCredentials()}. */
    public List<HostCredential> listHostCredentials() {
        return hosts.listHostCredentials();
    }

    /** {@link HostClient#revokeHostCredential(String)}. */
    public void revokeHostCredential(String id) {
        hosts.revokeHostCredential(id);
    }
}
