package io.rdmablock.mgmt.client;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The storage node's side of the pull model: registers the node, then every {@code intervalMs} sends a heartbeat
 * with what {@link Handler#report()} says and hands the answer (the desired state) to {@link Handler#apply}.
 * The storage node only implements {@link Handler}.
 *
 * <p>Credentials (docs/authentication.md, "Credentials and scopes"): the client's token (the cluster token) is the
 * bootstrap credential; the first registration with it returns the node's own credential, which the agent stores
 * ({@link CredentialStore}) and from then on sends instead, on every call of the client, so heartbeat answers carry
 * the node's secrets and its copy reports act as the node.
 *
 * <p>Failure handling: an unreachable server or an error answer is logged and retried at the next tick (the
 * node keeps serving what it has); a heartbeat answered 404 {@link ProblemTypes#NODE_NOT_FOUND} (the server lost
 * or never had the registration) registers again at once, and so does one answered 401 while the agent sends its
 * credential (it was replaced or the node removed): then with the cluster token, for a new credential. An
 * exception from the handler is logged and does not stop the loop. Ticks never overlap (one daemon thread, fixed delay).
 *
 * <p>{@link #tick()} runs one step synchronously, for tests and for a node that wants its first heartbeat done
 * before it starts serving.
 */
public final class NodeAgent implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NodeAgent.class);

    /** What the storage node implements. Both methods are called on the agent's thread, never concurrently. */
    public interface Handler {
        /** @return what the node holds now (free capacity and every volume) */
        HeartbeatRequest report();

        /**
         * Makes the node match the desired state: create volumes it lacks, grow those smaller than desired, delete
         * those in state {@code deleting}, update allowed hosts. May return before the work finishes; the next
         * {@link #report()} tells the server how far it got.
         */
        void apply(HeartbeatResponse desired);

        /**
         * As {@link #apply(HeartbeatResponse)}, with the {@link System#nanoTime()} taken just before the heartbeat
         * was sent (the start of the primary lease the answer grants, docs/failover.md). Default: {@link #apply}.
         */
        default void apply(HeartbeatResponse desired, long sendNanos) {
            apply(desired);
        }

        /** The management server's answer to a (re-)registration (e.g. the node's ordinal). Default: nothing. */
        default void registered(Node node) {
        }
    }

    /**
     * Where the node keeps its credential (docs/authentication.md, "Credentials and scopes"): the storage node's is
     * a file in its data directory next to its node id. Called on the agent's thread only.
     */
    public interface CredentialStore {
        /** @return the stored credential, or null when none */
        String load();

        /**
         * Stores {@code credential} (replacing any before), durably before returning.
         *
         * @throws java.io.UncheckedIOException when it cannot be stored (the agent uses it anyway until it stops)
         */
        void save(String credential);
    }

    /** A store that keeps the credential in memory only (lost when the process ends). */
    public static CredentialStore inMemory() {
        return new CredentialStore() {
            private volatile String value;

            @Override
            public String load() {
                return value;
            }

            @Override
            public void save(String credential) {
                value = credential;
            }
        };
    }

    private final MgmtClient client;
    private final CredentialStore credentials;
    /** The token the client was made with (the cluster token): a registration with it issues a new credential. */
    private final String bootstrapToken;
    /** True while the client sends the node's credential rather than {@link #bootstrapToken}. */
    private volatile boolean usingCredential;
    private final Supplier<RegisterNodeRequest> registration;
    private final Handler handler;
    private final long intervalMs;
    private final String nodeId;
    private final Object tickLock = new Object();
    private volatile boolean registered;
    private volatile long heartbeats;
    private volatile RuntimeException lastFailure;
    private ScheduledExecutorService scheduler;

    /**
     * @param client       management client (with the cluster token); its calls send the node's credential once
     *                     there is one
     * @param registration produces the registration body (called at each (re-)registration, so capacity is fresh);
     *                     its nodeId must stay the same
     * @param handler      the node's report/apply implementation
     * @param intervalMs   delay between the end of one tick and the start of the next, 10..600000 ms
     * @throws IllegalArgumentException when intervalMs is out of bounds or the registration is invalid
     */
    public NodeAgent(MgmtClient client, Supplier<RegisterNodeRequest> registration, Handler handler, long intervalMs) {
        this(client, registration, handler, intervalMs, inMemory());
    }

    /**
     * As {@link #NodeAgent(MgmtClient, Supplier, Handler, long)}, keeping the node's credential in
     * {@code credentials}: a stored credential of this node is used from the start (the client's token, the cluster
     * token, then serves only to register again when the server no longer accepts it, 401); a credential a
     * registration issues is stored, then sent on every call of {@code client} (heartbeats, copy reports).
     */
    public NodeAgent(MgmtClient client, Supplier<RegisterNodeRequest> registration, Handler handler, long intervalMs,
                     CredentialStore credentials) {
        this.client = Objects.requireNonNull(client, "client");
        this.credentials = Objects.requireNonNull(credentials, "credentials");
        this.bootstrapToken = client.token();
        this.registration = Objects.requireNonNull(registration, "registration");
        this.handler = Objects.requireNonNull(handler, "handler");
        if (intervalMs < 10 || intervalMs > 600_000) {
            throw Limits.invalid("intervalMs", Long.toString(intervalMs), "min=10, max=600000");
        }
        this.intervalMs = intervalMs;
        RegisterNodeRequest first = registration.get();
        Limits.check(first);
        this.nodeId = first.nodeId();
        String stored = credentials.load();
        if (stored != null && stored.startsWith("rbn1:" + nodeId + ":")) { // another node id's is ignored
            client.useToken(stored);
            usingCredential = true;
        }
    }

    /** Starts the background loop (first tick at once). Idempotent. */
    public synchronized NodeAgent start() {
        if (scheduler == null) {
            scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "node-agent-" + nodeId);
                t.setDaemon(true);
                return t;
            });
            scheduler.scheduleWithFixedDelay(this::tickQuietly, 0, intervalMs, TimeUnit.MILLISECONDS);
        }
        return this;
    }

    /**
     * One step: register if needed, then heartbeat and apply the answer.
     *
     * @return true when a heartbeat was answered and applied
     */
    public boolean tick() {
        synchronized (tickLock) {
            try {
                if (!registered) {
                    register();
                }
                HeartbeatResponse desired;
                HeartbeatRequest report = handler.report();
                long sendNanos = System.nanoTime(); // before sending: the lease starts no later than this
                try {
                    desired = client.heartbeat(nodeId, report);
                } catch (MgmtException e) {
                    if (e.status() == 401 && dropCredential()) {
                        LOG.warn("node {}: the management server no longer accepts its credential; registering"
                                + " again with the cluster token", nodeId);
                    } else if (e.status() == 404 && ProblemTypes.NODE_NOT_FOUND.equals(e.type())) {
                        LOG.warn("node {} unknown to the management server; registering again", nodeId);
                    } else {
                        throw e;
                    }
                    registered = false;
                    register();
                    report = handler.report();
                    sendNanos = System.nanoTime();
                    desired = client.heartbeat(nodeId, report);
                }
                handler.apply(desired, sendNanos);
                heartbeats++;
                lastFailure = null;
                return true;
            } catch (MgmtException | MgmtUnavailableException e) {
                if (lastFailure == null || !Objects.equals(lastFailure.getMessage(), e.getMessage())) {
                    LOG.warn("node {} heartbeat failed (retrying every {} ms): {}", nodeId, intervalMs,
                            e.getMessage());
                }
                lastFailure = e;
                return false;
            }
        }
    }

    private void register() {
        RegisterNodeRequest request = registration.get();
        if (!nodeId.equals(request.nodeId())) {
            throw new IllegalStateException("nodeId changed: was " + nodeId + ", now " + request.nodeId());
        }
        NodeRegistration r;
        try {
            r = client.registerNodeForCredential(request);
        } catch (MgmtException e) {
            if (e.status() != 401 || !dropCredential()) {
                throw e;
            }
            LOG.warn("node {}: the management server no longer accepts its credential; registering with the"
                    + " cluster token", nodeId);
            r = client.registerNodeForCredential(request);
        }
        if (r.credential() != null) {
            try {
                credentials.save(r.credential());
            } catch (java.io.UncheckedIOException e) {
                LOG.error("node {}: cannot store its credential ({}); using it until it stops", nodeId,
                        e.getMessage());
            }
            client.useToken(r.credential());
            usingCredential = true;
        }
        Node node = r.node();
        registered = true;
        handler.registered(node);
        LOG.info("node {} registered with {} (fabric {})", nodeId, client.baseUri(), request.fabricAddress());
    }

    /**
     * Goes back to the cluster token after the server refused the credential (401): it was replaced by an operator's
     * registration, or the node was removed, or the metadata lost.
     *
     * @return false when there is no credential in use or no cluster token to go back to (nothing changed)
     */
    private boolean dropCredential() {
        if (!usingCredential || bootstrapToken == null) {
            return false;
        }
        client.useToken(bootstrapToken);
        usingCredential = false;
        return true;
    }

    /** @return true while the agent sends the node's credential (not the cluster token) */
    public boolean usingCredential() {
        return usingCredential;
    }

    private void tickQuietly() {
        try {
            tick();
        } catch (RuntimeException e) {
            lastFailure = e;
            LOG.error("node {} heartbeat handler failed", nodeId, e);
        }
    }

    /** @return true once a registration succeeded (false again after a 404 until re-registered) */
    public boolean registered() {
        return registered;
    }

    /** @return heartbeats answered and applied so far */
    public long heartbeats() {
        return heartbeats;
    }

    /** @return the failure of the last tick, or null when it succeeded */
    public RuntimeException lastFailure() {
        return lastFailure;
    }

    /** Stops the loop and waits up to 5 s for a running tick. Idempotent. */
    @Override
    public synchronized void close() {
        if (scheduler != null) {
            scheduler.shutdownNow();
            try {
                if (!scheduler.awaitTermination(5, TimeUnit.SECONDS)) {
                    LOG.warn("node {} agent tick did not stop within 5 s", nodeId);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            scheduler = null;
        }
    }
}
