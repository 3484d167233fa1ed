package io.rdmablock.mgmt.api.store;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
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

/**
 * {@link MetadataStore} on an etcd v3 cluster (jetcd client; etcd API: https://etcd.io/docs/v3.4/learning/api/), for
 * several management servers sharing one metadata. Keys (UTF-8) are {@code <prefix>volumes/<name>},
 * {@code <prefix>nodes/<nodeId>}, {@code <prefix>host-credentials/<id>} (a hash, {@link HostCredentialRecord}) and
 * {@code <prefix>hosts/<hostNqn>} (a host's DH-HMAC-CHAP secrets, {@link HostRecord}) under {@link Config#prefix()}
 * (default {@value #DEFAULT_PREFIX}); values are the records as JSON ({@link Json}, the serialisation
 * {@link RocksMetadataStore} uses). The connection: {@link Config#access()} (TLS, client certificate, etcd user).
 * The secrets (host secrets, node keys) are encrypted with {@link Config#secrets()} when it has a key file, else
 * stored in clear (one warning at open when there are any).
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
     * @param access      TLS and authentication towards etcd ({@link EtcdAccess#NONE}: plain, none)
     * @param secrets     encryption of the stored secrets ({@link SecretCipher#NONE}: in clear)
     */
    public record Config(List<URI> endpoints, String prefix, Duration callTimeout, EtcdAccess access,
                         SecretCipher secrets) {
        /**
         * @throws IllegalArgumentException when a value is out of its bounds (the endpoints' schemes are checked
         *                                  against {@code access} at the open, {@link EtcdAccess#checkEndpoints})
         */
        public Config {
            endpoints = List.copyOf(Objects.requireNonNull(endpoints, "endpoints"));
            if (endpoints.isEmpty()) {
                throw new IllegalArgumentException("invalid endpoints: endpoints=[], must name at least one URL");
            }
            Objects.requireNonNull(access, "access");
            Objects.requireNonNull(secrets, "secrets");
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

        /** Plain connection, secrets in clear. @throws IllegalArgumentException as the canonical constructor */
        public Config(List<URI> endpoints, String prefix, Duration callTimeout) {
            this(endpoints, prefix, callTimeout, EtcdAccess.NONE, SecretCipher.NONE);
        }

        /** Endpoints with the default prefix and call timeout. */
        public static Config of(List<URI> endpoints) {
            return new Config(endpoints, DEFAULT_PREFIX, DEFAULT_CALL_TIMEOUT);
        }

        /** @return this configuration with {@code v} as {@link #access()} */
        public Config withAccess(EtcdAccess v) {
            return new Config(endpoints, prefix, callTimeout, v, secrets);
        }

        /** @return this configuration with {@code v} as {@link #secrets()} */
        public Config withSecrets(SecretCipher v) {
            return new Config(endpoints, prefix, callTimeout, access, v);
        }

        /**
         * @param commaSeparated {@code URL[,URL...]}, e.g. {@code http://127.0.0.1:2379,http://127.0.0.1:2381}
         * @return those endpoints
         * @throws IllegalArgumentException when empty or an entry is not an {@code http://} / {@code https://} URL
         */
        public static List<URI> parseEndpoints(String commaSeparated) {
            return EtcdCalls.parseEndpoints(commaSeparated);
        }
    }

    private final Config config;
    private final Client client;
    private final SecretCipher secrets;
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
     * @throws MetadataStoreException              when etcd refuses the connection for good: a TLS handshake that
     *                                             fails (the message names the TLS options), or a refused user or
     *                                             password (naming {@code --etcd-user})
     * @throws IllegalArgumentException            as {@link EtcdAccess#newClient} (a TLS or password file)
     */
    public EtcdMetadataStore(Config config) {
        this.config = Objects.requireNonNull(config, "config");
        this.secrets = config.secrets();
        this.client = config.access().newClient(config.endpoints());
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
                    EtcdCalls.throwIfRefused(config, e);
                    if (System.nanoTime() - deadline > 0 || Thread.currentThread().isInterrupted()) {
                        throw new MetadataStoreUnavailableException("etcd " + config.endpoints()
                                + " did not answer within " + Math.max(OPEN_BOUND.toMillis(),
                                config.callTimeout().toMillis()) + " ms of the open: " + e.getMessage(), e);
                    }
                    Thread.sleep(200);
                } catch (MetadataStoreException e) {
                    EtcdCalls.throwIfRefused(config, e);
                    throw e;
                }
            }
            warnClearSecrets();
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw new MetadataStoreUnavailableException("open of the etcd store interrupted", e);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /** @return a plain jetcd client as this store uses it ({@link EtcdAccess#newClient} of {@link EtcdAccess#NONE}) */
    public static Client newClient(List<URI> endpoints) {
        return EtcdAccess.NONE.newClient(endpoints);
    }

    /** One WARN when secrets are stored in clear ({@link SecretCipher#warnClear}). */
    private void warnClearSecrets() {
        var stored = new ArrayList<Object>();
        for (String prefix : new String[] {hostPrefix, nodePrefix}) {
            Class<?> type = prefix.equals(hostPrefix) ? HostRecord.class : NodeRecord.class;
            scanKeys(prefix, kv -> {
                try {
                    stored.add(Json.read(kv.getValue().toString(StandardCharsets.UTF_8), type));
                } catch (IllegalArgumentException e) {
                    // a corrupt record fails where it is read, not here
                }
            });
        }
        SecretCipher.warnClear("etcd " + config.endpoints() + " prefix " + config.prefix(), secrets, stored.stream());
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

    private ByteSequence encode(String key, Object record) {
        byte[] value = Json.write(secrets.sealRecord(record)).getBytes(StandardCharsets.UTF_8);
        if (value.length > MAX_VALUE_BYTES) {
            throw new MetadataStoreException("put " + key + " refused: record of " + value.length
                    + " bytes, max=" + MAX_VALUE_BYTES + " (etcd request limit 1.5 MiB)", null);
        }
        return ByteSequence.from(value);
    }

    private <T> T decode(String key, KeyValue kv, Class<T> type) {
        T record;
        try {
            record = Json.read(kv.getValue().toString(StandardCharsets.UTF_8), type);
        } catch (IllegalArgumentException e) {
            throw new MetadataStoreException("corrupt record " + key + ": " + e.getMessage(), e);
        }
        return secrets.openRecord(record);
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** Waits for a call within the bound; maps failures to the store's exceptions ({@link EtcdCalls#await}). */
    private <T> T await(String what, CompletableFuture<T> call) {
        if (closed) {
            throw new MetadataStoreUnavailableException(what + " failed: the etcd store is closed", null);
        }
        return EtcdCalls.await(config, what, call);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            client.close();
        }
    }
}
