package io.rdmablock.mgmt.api.ha;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.election.CampaignResponse;
import io.etcd.jetcd.election.LeaderKey;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.rdmablock.mgmt.api.store.MetadataStoreUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One management server's part in the election of the management leader, on etcd's election API (v3election:
 * https://etcd.io/docs/v3.4/dev-guide/api_concurrency_reference_v3/) with a lease of its own (Lease API:
 * https://etcd.io/docs/v3.4/learning/api/#lease-api). Contenders campaign under one election name with their advertised
 * URL as value; etcd makes the contender with the oldest key leader, the others' campaigns wait.
 *
 * <p>Leadership is bounded by this process's monotonic clock ({@link System#nanoTime()}), not by etcd alone: every lease
 * grant or keep-alive sent at time {@code s} that etcd answers with a TTL of {@code t} seconds makes the lease valid
 * until {@code s + min(t, ttl)} for this process (etcd renewed it no earlier than {@code s}, so etcd expires it no earlier
 * than that). {@link #isLeader()} is false from that instant on, and at once when a keep-alive fails or etcd says the
 * lease is gone, whichever comes first: "a leader that loses its lease stops deciding at once". (etcd 3.4 may refresh
 * lease TTLs on a raft leader change; that can only lengthen the lease at etcd, so another contender may wait longer,
 * never overlap.) Keep-alives are sent every {@code ttl / 3}. A lost term is followed, after a short pause, by a new
 * campaign with a new lease. Epochs in the volume records stay the safety mechanism of promotions; leadership only
 * decides who runs them.
 *
 * <p>Thread-safety: {@link #isLeader()} and {@link #leaderKey()} are volatile reads, callable from any thread (an event
 * loop included); {@link Listener} calls come from this object's thread, in order, never concurrently.
 */
public final class Leadership implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Leadership.class);
    /** Default lease TTL. */
    public static final Duration DEFAULT_TTL = Duration.ofSeconds(3);
    /** Default election name (an etcd key prefix). */
    public static final String DEFAULT_ELECTION = "/rdmablock/mgmt-leader";
    /** Pause between a lost or failed term and the next campaign. */
    static final long RETRY_PAUSE_MS = 200;

    /**
     * @param election      election name, e.g. {@value #DEFAULT_ELECTION}: contenders of one management cluster share it
     * @param advertisedUrl this server's URL as clients reach it ({@link #leader()} returns the leader's), non-empty
     * @param ttl           lease TTL, whole seconds, 2 s .. 60 s (etcd's minimum lease TTL is 1.5 x its election
     *                      timeout: 1.5 s by default); loss is detected within it
     */
    public record Config(String election, String advertisedUrl, Duration ttl) {
        public Config {
            Objects.requireNonNull(election, "election");
            Objects.requireNonNull(advertisedUrl, "advertisedUrl");
            Objects.requireNonNull(ttl, "ttl");
            if (election.isEmpty() || advertisedUrl.isEmpty()) {
                throw new IllegalArgumentException("invalid election/advertisedUrl: must be non-empty");
            }
            if (ttl.toMillis() % 1000 != 0 || ttl.toSeconds() < 2 || ttl.toSeconds() > 60) {
                throw new IllegalArgumentException("invalid ttl: ttl=" + ttl + ", whole seconds, min=PT2S, max=PT1M");
            }
        }

        /** Default election and TTL. */
        public static Config of(String advertisedUrl) {
            return new Config(DEFAULT_ELECTION, advertisedUrl, DEFAULT_TTL);
        }
    }

    /** Gain and loss of leadership; called on the leadership thread. */
    public interface Listener {
        /** This contender became leader ({@link #isLeader()} is true already). */
        void gained();

        /** This contender is no longer leader ({@link #isLeader()} is false already); {@code why} says what happened. */
        void lost(String why);
    }

    private final Client client;
    private final Config config;
    private final Listener listener;
    private final ByteSequence electionName;
    private final ByteSequence value;
    private final long ttlNanos;
    private final Thread thread;
    private volatile boolean closed;
    private volatile boolean leader;
    /** Monotonic instant up to which this process's lease is valid (meaningful while {@link #leader}). */
    private volatile long leaseValidUntilNanos;
    private volatile LeaderKey leaderKey;
    /** Lease of the current term, 0 when none. */
    private volatile long leaseId;
    /** Gain was announced to the listener and loss not yet; only the leadership thread touches it. */
    private boolean announced;
    /** Tests: keep-alives not sent (the lease runs out by the clock). */
    private volatile boolean keepAliveSuspended;
    /** Tests: stop as a crash would (no resign, no revoke). */
    private volatile boolean crashed;

    /**
     * Creates the contender; {@link #start()} begins campaigning.
     *
     * @param client   jetcd client (not closed by this object), e.g. {@code EtcdMetadataStore.client()}
     * @param listener gain/loss callbacks (may be null)
     */
    public Leadership(Client client, Config config, Listener listener) {
        this.client = Objects.requireNonNull(client, "client");
        this.config = Objects.requireNonNull(config, "config");
        this.listener = listener == null ? new Listener() {
            @Override
            public void gained() {
            }

            @Override
            public void lost(String why) {
            }
        } : listener;
        this.electionName = ByteSequence.from(config.election(), StandardCharsets.UTF_8);
        this.value = ByteSequence.from(config.advertisedUrl(), StandardCharsets.UTF_8);
        this.ttlNanos = config.ttl().toNanos();
        this.thread = Thread.ofPlatform().daemon().name("leadership-" + config.advertisedUrl()).unstarted(this::run);
    }

    /** Starts campaigning (once). */
    public void start() {
        thread.start();
    }

    /**
     * @return true while this contender holds the election and its lease is valid by this process's clock; a cheap
     *         read of two volatile fields and the monotonic clock
     */
    public boolean isLeader() {
        return leader && System.nanoTime() - leaseValidUntilNanos < 0;
    }

    /** @return this contender's leader key while it leads (etcd's key, revision and lease), else empty */
    public Optional<LeaderKey> leaderKey() {
        return isLeader() ? Optional.ofNullable(leaderKey) : Optional.empty();
    }

    /** @return this contender's configuration */
    public Config config() {
        return config;
    }

    /**
     * Asks etcd who leads now (for redirects), waiting at most the TTL.
     *
     * @return the leader's advertised URL (its election value), empty when nobody leads
     * @throws MetadataStoreUnavailableException when etcd does not answer within the TTL
     */
    public Optional<String> leader() {
        // etcd's election leader is the key under "<name>/" with the lowest create revision (v3election Leader):
        // read it with one bounded range request (the election service's Leader call was seen not to answer within
        // a follower's request timeout)
        var prefix = ByteSequence.from(config.election() + "/", StandardCharsets.UTF_8);
        var call = client.getKVClient().get(prefix, io.etcd.jetcd.options.GetOption.builder().isPrefix(true)
                .withSortField(io.etcd.jetcd.options.GetOption.SortTarget.CREATE)
                .withSortOrder(io.etcd.jetcd.options.GetOption.SortOrder.ASCEND).withLimit(1).build());
        try {
            var response = call.get(ttlNanos, TimeUnit.NANOSECONDS);
            if (response.getKvs().isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(response.getKvs().getFirst().getValue().toString(StandardCharsets.UTF_8));
        } catch (ExecutionException e) {
            throw new MetadataStoreUnavailableException("election leader " + config.election() + " failed: "
                    + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            call.cancel(true);
            throw new MetadataStoreUnavailableException("election leader " + config.election()
                    + ": etcd did not answer within " + config.ttl().toMillis() + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MetadataStoreUnavailableException("election leader " + config.election() + " interrupted", e);
        }
    }

    private void run() {
        while (!closed && !crashed) {
            String why;
            try {
                why = term();
            } catch (InterruptedException e) {
                why = closed ? "closed" : crashed ? "crashed (test)" : "interrupted";
            } catch (ExecutionException e) {
                why = "etcd call failed: " + e.getCause();
            } catch (TimeoutException e) {
                why = "etcd did not answer within the lease";
            } catch (RuntimeException e) {
                why = "failed: " + e;
            }
            leader = false;
            if (announced) {
                announced = false;
                LOG.warn("{}: leadership of {} lost: {}", config.advertisedUrl(), config.election(), why);
                notifyLost(why);
            } else if (!closed && !crashed) {
                LOG.debug("{}: campaign for {} ended: {}", config.advertisedUrl(), config.election(), why);
            }
            long id = leaseId;
            leaseId = 0;
            if (id != 0 && !crashed) { // our key goes with the lease: the next contender need not wait for the TTL
                revoke(id);
            }
            if (!closed && !crashed) {
                try {
                    Thread.sleep(RETRY_PAUSE_MS);
                } catch (InterruptedException e) {
                    // closing
                }
            }
        }
    }

    /** One lease: grant, campaign, keep alive until lost. @return why it ended */
    private String term() throws InterruptedException, ExecutionException, TimeoutException {
        long ttlSeconds = config.ttl().toSeconds();
        long sent = System.nanoTime();
        LeaseGrantResponse grant = client.getLeaseClient().grant(ttlSeconds).get(ttlNanos, TimeUnit.NANOSECONDS);
        leaseId = grant.getID();
        long validUntil = sent + Math.min(ttlNanos, TimeUnit.SECONDS.toNanos(grant.getTTL()));
        leaseValidUntilNanos = validUntil;
        CompletableFuture<CampaignResponse> campaign = client.getElectionClient().campaign(electionName, leaseId, value);
        long keepAliveEvery = ttlNanos / 3;
        long nextKeepAlive = sent + keepAliveEvery;
        try {
            while (!closed && !crashed) {
                long now = System.nanoTime();
                if (now - validUntil >= 0) {
                    return "lease " + Long.toHexString(leaseId) + " expired by this process's clock (no keep-alive"
                            + " answered within " + config.ttl().toMillis() + " ms)";
                }
                if (!leader && campaign.isDone()) {
                    LeaderKey key = campaign.get().getLeader(); // a failed campaign throws: the term ends
                    if (System.nanoTime() - validUntil >= 0) {
                        return "elected after the lease ran out";
                    }
                    leaderKey = key;
                    leader = true;
                    announced = true;
                    LOG.info("{}: leader of {} (lease {})", config.advertisedUrl(), config.election(),
                            Long.toHexString(leaseId));
                    notifyGained();
                    continue;
                }
                if (now - nextKeepAlive >= 0) {
                    long s = System.nanoTime(); // read before the flag: a keep-alive not skipped was sent before it
                    if (keepAliveSuspended) {
                        nextKeepAlive = now + keepAliveEvery;
                        continue;
                    }
                    LeaseKeepAliveResponse r;
                    try {
                        r = client.getLeaseClient().keepAliveOnce(leaseId).get(Math.max(1, validUntil - s),
                                TimeUnit.NANOSECONDS);
                    } catch (ExecutionException e) {
                        return "keep-alive of lease " + Long.toHexString(leaseId) + " failed: " + e.getCause();
                    } catch (TimeoutException e) {
                        return "keep-alive of lease " + Long.toHexString(leaseId) + " unanswered until the lease ran out";
                    }
                    if (r.getTTL() <= 0) {
                        return "lease " + Long.toHexString(leaseId) + " gone at etcd";
                    }
                    validUntil = s + Math.min(ttlNanos, TimeUnit.SECONDS.toNanos(r.getTTL()));
                    leaseValidUntilNanos = validUntil;
                    nextKeepAlive = s + keepAliveEvery;
                    continue;
                }
                long waitUntil = Math.min(nextKeepAlive, validUntil);
                long wait = Math.max(1, waitUntil - System.nanoTime());
                if (!leader) {
                    try {
                        campaign.get(wait, TimeUnit.NANOSECONDS);
                    } catch (TimeoutException e) {
                        // still waiting for the election: keep the lease alive
                    } catch (ExecutionException e) {
                        return "campaign failed: " + e.getCause();
                    }
                } else {
                    TimeUnit.NANOSECONDS.sleep(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(50)));
                }
            }
            return closed ? "closed" : "crashed (test)";
        } finally {
            if (!campaign.isDone()) {
                campaign.cancel(true);
            }
        }
    }

    private void revoke(long id) {
        try {
            client.getLeaseClient().revoke(id).get(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.debug("revoke of lease {} failed (it expires by its TTL): {}", Long.toHexString(id), e.toString());
        }
    }

    private void notifyGained() {
        try {
            listener.gained();
        } catch (RuntimeException e) {
            LOG.error("leadership listener failed on gain", e);
        }
    }

    private void notifyLost(String why) {
        try {
            listener.lost(why);
        } catch (RuntimeException e) {
            LOG.error("leadership listener failed on loss", e);
        }
    }

    /** Tests: stop sending keep-alives (as a process whose keep-alives stall); the lease then runs out by the clock. */
    void suspendKeepAliveForTest() {
        keepAliveSuspended = true;
    }

    /**
     * Tests: stop as a killed process would, at once and without resigning or revoking (the lease lives on at etcd
     * until its TTL). Returns once the thread has stopped.
     */
    void crashForTest() throws InterruptedException {
        crashed = true;
        leader = false;
        thread.interrupt();
        thread.join(5_000);
    }

    /**
     * Resigns when leading (etcd's Resign: the next contender is elected at once), revokes the lease, stops the thread;
     * each step bounded (1 s for etcd calls, 5 s for the thread). Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        LeaderKey key = leaderKey;
        boolean was = leader;
        leader = false;
        if (was && key != null && !crashed) {
            try {
                client.getElectionClient().resign(key).get(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                LOG.debug("resign failed (the lease is revoked or expires): {}", e.toString());
            }
        }
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
