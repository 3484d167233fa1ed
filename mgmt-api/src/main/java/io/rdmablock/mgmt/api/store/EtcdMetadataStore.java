package io.rdmablock.mgmt.api.store;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.common.exception.ClosedClientException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.grpc.Status;
import io.rdmablock.mgmt.client.Json;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link MetadataStore} on an etcd v3 cluster (jetcd client; etcd API: https://etcd.io/docs/v3.4/learning/api/), for
 * several management servers sharing one metadata. Keys (UTF-8) are {@code <prefix>volumes/<name>},
 * {@code <prefix>nodes/<nodeId>}, {@code <prefix>host-credentials/<id>} (a hash, {@link HostCredentialRecord}) and
 * {@code <prefix>hosts/<hostNqn>} (a host's secrets in clear, {@link HostRecord};
 * etcd's own access control and TLS protect them) under {@link Config#prefix()} (default {@value #DEFAULT_PREFIX});
 * values are the records as JSON ({@link Json}, the serialisation {@link RocksMetadataStore} uses).
 *
 * <p>Revisions are etcd's own: {@link #volumeVersioned(String)} returns the key's {@code mod_revision}, and
 * {@link #replaceVolume(String, long, VolumeRecord)} is one transaction
 * {@code If(ModRevision(key) == expected).Then(Put(key, next))} (a missing key compares as revision 0, etcd's zero
 * value), so a compare-and-set is atomic against every write of any management server;
 * {@link #removeVolume(String, long)} likewise {@code If(ModRevision(key) == expected).Then(Delete(key))}. A node's
 * compare-and-set by value ({@link #replaceNode}) reads the key, compares the record and writes with
 * {@code If(ModRevision(key) == revision read)}. The management server changes volumes only by these two (the unconditional {@link #putVolume} and
 * {@link #removeVolume(String)} are for tools and tests). Reads are linearizable
 * (etcd's default range, not {@code serializable}). Listings are ranges over the prefix in key order, fetched in pages of
 * {@value #PAGE_KEYS} keys pinned to the first page's revision (one consistent snapshot, each answer well under gRPC's
 * 4 MiB default); a record above {@value #MAX_VALUE_BYTES} bytes is refused before it is sent (etcd's default request
 * limit is 1.5 MiB, {@code --max-request-bytes}). No transaction has more than one operation (etcd's default limit: 128,
 * {@code --max-txn-ops}).
 *
 * <p>Every call waits at most {@link Config#callTimeout()}; every request carries etcd's {@code hasleader} header, so
 * a member that has lost its raft leader answers at once instead of queuing. A call that times out, or that etcd answers
 * with "unavailable", "no leader" or "request timed out", throws {@link MetadataStoreUnavailableException} (REST: 503);
 * any other failure (a corrupt record, a refused request) {@link MetadataStoreException}. After an unavailable write
 * it is unknown whether it was applied: the transaction is not retried by the client (jetcd retries only
 * errors that prove the request was not applied), so a caller re-reads.
 */
public final class EtcdMetadataStore implements MetadataStore {
    /** Default key prefix. */
    public static final String DEFAULT_PREFIX = "/rdmablock/";
    /** Default bound of each call. */
    public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(5);
    /** Largest encoded record, bytes (etcd's default request limit is 1.5 MiB: 1572864 bytes). */
    public static final int MAX_VALUE_BYTES = 1024 * 1024;
    /**
     * Bound of the check at open (the first call of a new JVM loads gRPC and can take seconds on a loaded machine; a
     * server started together with its etcd waits for it).
     */
    public static final Duration OPEN_BOUND = Duration.ofSeconds(30);
    /** Keys per page of a listing. */
    static final int PAGE_KEYS = 100;

    /**
     * How to reach etcd.
     *
     * @param endpoints   client URLs of the members, e.g. {@code http://127.0.0.1:2379}; at least one
     * @param prefix      key prefix, non-empty, e.g. {@value #DEFAULT_PREFIX}; several clusters can share one etcd
     *                    with distinct prefixes
     * @param callTimeout bound of each store call, 100 ms .. 10 min
     */
    public record Config(List<URI> endpoints, String prefix, Duration callTimeout) {
        public Config {
            endpoints = List.copyOf(Objects.requireNonNull(endpoints, "endpoints"));
            if (endpoints.isEmpty()) {
                throw new IllegalArgumentException("invalid endpoints: endpoints=[], must name at least one URL");
            }
            Objects.requireNonNull(prefix, "prefix");
            if (prefix.isEmpty()) {
                throw new IllegalArgumentException("invalid prefix: prefix=\"\", must be non-empty");
            }
            Objects.requireNonNull(callTimeout, "callTimeout");
            if (callTimeout.toMillis() < 100 || callTimeout.toMinutes() > 10) {
                throw new IllegalArgumentException("invalid callTimeout: callTimeout=" + callTimeout
                        + ", min=PT0.1S, max=PT10M");
            }
        }

        /** Endpoints with the default prefix and call timeout. */
        public static Config of(List<URI> endpoints) {
            return new Config(endpoints, DEFAULT_PREFIX, DEFAULT_CALL_TIMEOUT);
        }

        /**
         * @param commaSeparated {@code URL[,URL...]}, e.g. {@code http://127.0.0.1:2379,http://127.0.0.1:2381}
         * @return those endpoints
         * @throws IllegalArgumentException when empty or an entry is not an {@code http://} / {@code https://} URL
         */
        public static List<URI> parseEndpoints(String commaSeparated) {
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
    }

    private final Config config;
    private final Client client;
    private final String volumePrefix;
    private final String nodePrefix;
    private final String hostPrefix;
    private final String hostCredentialPrefix;
    private volatile boolean closed;

    /**
     * Connects to etcd and checks that it answers (a linearizable read of the prefix, so a cluster without quorum is
     * refused at start), retrying for up to {@link #OPEN_BOUND} or {@link Config#callTimeout()}, the longer.
     *
     * @throws MetadataStoreUnavailableException when etcd does not answer within that bound
     */
    public EtcdMetadataStore(Config config) {
        this.config = Objects.requireNonNull(config, "config");
        this.client = newClient(config.endpoints());
        this.volumePrefix = config.prefix() + "volumes/";
        this.nodePrefix = config.prefix() + "nodes/";
        this.hostPrefix = config.prefix() + "hosts/";
        this.hostCredentialPrefix = config.prefix() + "host-credentials/";
        try {
            long deadline = System.nanoTime() + Math.max(OPEN_BOUND.toNanos(), config.callTimeout().toNanos());
            while (true) {
                try {
                    await("check " + config.prefix(), client.getKVClient().get(bytes(config.prefix()),
                            GetOption.builder().withCountOnly(true).isPrefix(true).build()));
                    break;
                } catch (MetadataStoreUnavailableException e) {
                    if (System.nanoTime() - deadline > 0 || Thread.currentThread().isInterrupted()) {
                        throw new MetadataStoreUnavailableException("etcd " + config.endpoints()
                                + " did not answer within " + Math.max(OPEN_BOUND.toMillis(),
                                config.callTimeout().toMillis()) + " ms of the open: " + e.getMessage(), e);
                    }
                    Thread.sleep(200);
                }
            }
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw new MetadataStoreUnavailableException("open of the etcd store interrupted", e);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * A jetcd client as this store and {@code io.rdmablock.mgmt.api.ha.Leadership} use it: the {@code hasleader}
     * header on every request, no waiting for a connection inside gRPC (the caller's bound decides), 16 MiB answers.
     */
    public static Client newClient(List<URI> endpoints) {
        return Client.builder()
                .endpoints(endpoints.toArray(URI[]::new))
                .header("hasleader", "true")
                .waitForReady(false)
                .connectTimeout(Duration.ofSeconds(2))
                .keepaliveTime(Duration.ofSeconds(5))
                .keepaliveTimeout(Duration.ofSeconds(3))
                .retryMaxDuration(Duration.ofSeconds(2))
                .maxInboundMessageSize(16 * 1024 * 1024)
                .build();
    }

    /** @return this store's configuration */
    public Config config() {
        return config;
    }

    /** @return the jetcd client (owned by this store, closed by {@link #close()}), e.g. for an election */
    public Client client() {
        return client;
    }

    @Override
    public Optional<VolumeRecord> volume(String name) {
        return volumeVersioned(name).map(Versioned::value);
    }

    @Override
    public Optional<Versioned<VolumeRecord>> volumeVersioned(String name) {
        String key = volumePrefix + name;
        GetResponse r = await("get " + key, client.getKVClient().get(bytes(key)));
        if (r.getKvs().isEmpty()) {
            return Optional.empty();
        }
        KeyValue kv = r.getKvs().getFirst();
        return Optional.of(new Versioned<>(decode(key, kv, VolumeRecord.class), kv.getModRevision()));
    }

    @Override
    public List<VolumeRecord> volumes() {
        return scan(volumePrefix, VolumeRecord.class);
    }

    @Override
    public void putVolume(VolumeRecord volume) {
        String key = volumePrefix + volume.name();
        await("put " + key, client.getKVClient().put(bytes(key), encode(key, volume)));
    }

    @Override
    public boolean replaceVolume(String name, long expectedRevision, VolumeRecord next) {
        MetadataStore.checkReplace(name, expectedRevision, next);
        String key = volumePrefix + name;
        ByteSequence k = bytes(key);
        return await("compare-and-set " + key + " at revision " + expectedRevision, client.getKVClient().txn()
                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(expectedRevision)))
                .Then(Op.put(k, encode(key, next), PutOption.DEFAULT))
                .commit()).isSucceeded();
    }

    @Override
    public void removeVolume(String name) {
        String key = volumePrefix + name;
        await("delete " + key, client.getKVClient().delete(bytes(key)));
    }

    @Override
    public boolean removeVolume(String name, long expectedRevision) {
        MetadataStore.checkRemove(expectedRevision);
        String key = volumePrefix + name;
        ByteSequence k = bytes(key);
        return await("compare-and-delete " + key + " at revision " + expectedRevision, client.getKVClient().txn()
                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(expectedRevision)))
                .Then(Op.delete(k, io.etcd.jetcd.options.DeleteOption.DEFAULT))
                .commit()).isSucceeded();
    }

    @Override
    public Optional<NodeRecord> node(String nodeId) {
        String key = nodePrefix + nodeId;
        GetResponse r = await("get " + key, client.getKVClient().get(bytes(key)));
        return r.getKvs().isEmpty() ? Optional.empty()
                : Optional.of(decode(key, r.getKvs().getFirst(), NodeRecord.class));
    }

    @Override
    public List<NodeRecord> nodes() {
        return scan(nodePrefix, NodeRecord.class);
    }

    @Override
    public void putNode(NodeRecord node) {
        String key = nodePrefix + node.nodeId();
        await("put " + key, client.getKVClient().put(bytes(key), encode(key, node)));
    }

    @Override
    public boolean replaceNode(String nodeId, NodeRecord expected, NodeRecord next) {
        MetadataStore.checkReplaceNode(nodeId, expected, next);
        String key = nodePrefix + nodeId;
        ByteSequence k = bytes(key);
        GetResponse r = await("get " + key, client.getKVClient().get(k));
        long revision = 0; // a missing key compares as revision 0
        if (!r.getKvs().isEmpty()) {
            KeyValue kv = r.getKvs().getFirst();
            if (!decode(key, kv, NodeRecord.class).equals(expected)) {
                return false;
            }
            revision = kv.getModRevision();
        } else if (expected != null) {
            return false;
        }
        return await("compare-and-set " + key + " at revision " + revision, client.getKVClient().txn()
                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(revision)))
                .Then(Op.put(k, encode(key, next), PutOption.DEFAULT))
                .commit()).isSucceeded();
    }

    @Override
    public void removeNode(String nodeId) {
        String key = nodePrefix + nodeId;
        await("delete " + key, client.getKVClient().delete(bytes(key)));
    }

    @Override
    public Optional<Versioned<HostRecord>> hostVersioned(String hostNqn) {
        String key = hostPrefix + hostNqn;
        GetResponse r = await("get " + key, client.getKVClient().get(bytes(key)));
        if (r.getKvs().isEmpty()) {
            return Optional.empty();
        }
        KeyValue kv = r.getKvs().getFirst();
        return Optional.of(new Versioned<>(decode(key, kv, HostRecord.class), kv.getModRevision()));
    }

    @Override
    public List<Versioned<HostRecord>> hosts() {
        var out = new ArrayList<Versioned<HostRecord>>();
        scanKeys(hostPrefix, kv -> out.add(new Versioned<>(decode(kv.getKey().toString(StandardCharsets.UTF_8), kv,
                HostRecord.class), kv.getModRevision())));
        return out;
    }

    @Override
    public boolean replaceHost(String hostNqn, long expectedRevision, HostRecord next) {
        MetadataStore.checkReplaceHost(hostNqn, expectedRevision, next);
        String key = hostPrefix + hostNqn;
        ByteSequence k = bytes(key);
        return await("compare-and-set " + key + " at revision " + expectedRevision, client.getKVClient().txn()
                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(expectedRevision)))
                .Then(Op.put(k, encode(key, next), PutOption.DEFAULT))
                .commit()).isSucceeded();
    }

    @Override
    public boolean removeHost(String hostNqn, long expectedRevision) {
        MetadataStore.checkRemove(expectedRevision);
        String key = hostPrefix + hostNqn;
        ByteSequence k = bytes(key);
        return await("compare-and-delete " + key + " at revision " + expectedRevision, client.getKVClient().txn()
                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(expectedRevision)))
                .Then(Op.delete(k, io.etcd.jetcd.options.DeleteOption.DEFAULT))
                .commit()).isSucceeded();
    }

    @Override
    public Optional<HostCredentialRecord> hostCredential(String id) {
        String key = hostCredentialPrefix + id;
        GetResponse r = await("get " + key, client.getKVClient().get(bytes(key)));
        return r.getKvs().isEmpty() ? Optional.empty()
                : Optional.of(decode(key, r.getKvs().getFirst(), HostCredentialRecord.class));
    }

    @Override
    public List<HostCredentialRecord> hostCredentials() {
        return scan(hostCredentialPrefix, HostCredentialRecord.class);
    }

    @Override
    public boolean createHostCredential(HostCredentialRecord record) {
        String key = hostCredentialPrefix + record.id();
        ByteSequence k = bytes(key);
        return await("create " + key, client.getKVClient().txn()
                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(0))) // a missing key compares as revision 0
                .Then(Op.put(k, encode(key, record), PutOption.DEFAULT))
                .commit()).isSucceeded();
    }

    @Override
    public boolean removeHostCredential(String id) {
        String key = hostCredentialPrefix + id;
        return await("delete " + key, client.getKVClient().delete(bytes(key))).getDeleted() > 0;
    }

    /** Every key under {@code prefix} in key order, in pages at the revision of the first page. */
    private <T> List<T> scan(String prefix, Class<T> type) {
        var out = new ArrayList<T>();
        scanKeys(prefix, kv -> out.add(decode(kv.getKey().toString(StandardCharsets.UTF_8), kv, type)));
        return out;
    }

    /** Each key-value under {@code prefix} in key order, in pages at the revision of the first page. */
    private void scanKeys(String prefix, java.util.function.Consumer<KeyValue> each) {
        byte[] end = prefixEnd(prefix.getBytes(StandardCharsets.UTF_8));
        ByteSequence from = bytes(prefix);
        long revision = 0;
        while (true) {
            var option = GetOption.builder()
                    .withRange(ByteSequence.from(end))
                    .withLimit(PAGE_KEYS)
                    .withSortField(GetOption.SortTarget.KEY)
                    .withSortOrder(GetOption.SortOrder.ASCEND)
                    .withRevision(revision)
                    .build();
            GetResponse page = await("scan " + prefix, client.getKVClient().get(from, option));
            if (revision == 0) {
                revision = page.getHeader().getRevision();
            }
            for (KeyValue kv : page.getKvs()) {
                each.accept(kv);
            }
            if (!page.isMore() || page.getKvs().isEmpty()) {
                return;
            }
            byte[] last = page.getKvs().getLast().getKey().getBytes();
            from = ByteSequence.from(Arrays.copyOf(last, last.length + 1)); // the next key after last: last + 0x00
        }
    }

    /** @return the smallest key above every key with this prefix (etcd's "prefix end") */
    static byte[] prefixEnd(byte[] prefix) {
        byte[] end = prefix.clone();
        for (int i = end.length - 1; i >= 0; i--) {
            if (end[i] != (byte) 0xff) {
                end[i]++;
                return Arrays.copyOf(end, i + 1);
            }
        }
        return new byte[] {0}; // every key (etcd: "\0" as range end)
    }

    private static ByteSequence encode(String key, Object record) {
        byte[] value = Json.write(record).getBytes(StandardCharsets.UTF_8);
        if (value.length > MAX_VALUE_BYTES) {
            throw new MetadataStoreException("put " + key + " refused: record of " + value.length
                    + " bytes, max=" + MAX_VALUE_BYTES + " (etcd request limit 1.5 MiB)", null);
        }
        return ByteSequence.from(value);
    }

    private static <T> T decode(String key, KeyValue kv, Class<T> type) {
        try {
            return Json.read(kv.getValue().toString(StandardCharsets.UTF_8), type);
        } catch (IllegalArgumentException e) {
            throw new MetadataStoreException("corrupt record " + key + ": " + e.getMessage(), e);
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** Waits for a call within the bound; maps failures to the store's exceptions. */
    private <T> T await(String what, CompletableFuture<T> call) {
        if (closed) {
            throw new MetadataStoreUnavailableException(what + " failed: the etcd store is closed", null);
        }
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

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            client.close();
        }
    }
}
