package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.Json;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The embedded default {@link MetadataStore}: one RocksDB database in a directory. Keys are
 * {@code "volume/<name>"}, {@code "node/<nodeId>"}, {@code "host/<hostNqn>"} and {@code "host-credential/<id>"}
 * (UTF-8), values the records as JSON; the secrets in them (host secrets, node keys) sealed with the
 * {@link SecretCipher} given at open, else in clear ({@link HostRecord}). Writes use
 * {@code sync=true} (fsync of the WAL before returning), so an acknowledged change survives a crash.
 * Only one process may open the directory (RocksDB's LOCK file); a second open fails with
 * {@link MetadataStoreException}.
 *
 * <p>Revisions ({@link Versioned}): {@code "meta/revision"} holds the last revision given out (8 bytes, big
 * endian) and {@code "volume-rev/<name>"} the revision of each volume key; a volume write puts the record, its
 * revision and the counter in one {@link WriteBatch}, under this store's lock, so a compare-and-set is atomic
 * against every other volume write. A volume record written before revisions existed (no revision key) reads as
 * revision 1; the counter of such a database starts at 1, so every later write is above it. Hosts have revisions the
 * same way ({@code "host-rev/<hostNqn>"}, the same counter and lock). Node records have no revision: their
 * compare-and-set ({@link #replaceNode}) compares the stored record with the expected one under the same lock,
 * which every node write takes.
 */
public final class RocksMetadataStore implements MetadataStore {
    private static final String VOLUME_PREFIX = "volume/";
    private static final String VOLUME_REVISION_PREFIX = "volume-rev/";
    private static final String NODE_PREFIX = "node/";
    private static final String HOST_PREFIX = "host/";
    private static final String HOST_REVISION_PREFIX = "host-rev/";
    private static final String HOST_CREDENTIAL_PREFIX = "host-credential/";
    private static final String REVISION_KEY = "meta/revision";
    /** Revision of a volume record written before revisions were stored. */
    private static final long LEGACY_REVISION = 1;

    private final Options options;
    private final WriteOptions writeOptions;
    private final RocksDB db;
    private final Path dir;
    private final SecretCipher secrets;
    private volatile boolean closed;
    /** Read-locked by every database call, write-locked by {@link #close}. */
    private final java.util.concurrent.locks.ReentrantReadWriteLock guard =
            new java.util.concurrent.locks.ReentrantReadWriteLock();
    /** Last revision given out; guarded by {@link #volumeLock}. */
    private long revision;
    private final Object volumeLock = new Object();

    /**
     * Opens (creating if needed) the database in {@code dir}; secrets stored in clear ({@link SecretCipher#NONE}).
     *
     * @throws MetadataStoreException when the directory cannot be created or the database cannot be opened
     */
    public RocksMetadataStore(Path dir) {
        this(dir, SecretCipher.NONE);
    }

    /**
     * Opens (creating if needed) the database in {@code dir}, sealing the secrets it writes with {@code secrets}.
     *
     * @throws MetadataStoreException when the directory cannot be created or the database cannot be opened
     */
    public RocksMetadataStore(Path dir, SecretCipher secrets) {
        RocksDB.loadLibrary();
        this.dir = dir;
        this.secrets = java.util.Objects.requireNonNull(secrets, "secrets");
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new MetadataStoreException("cannot create metadata directory " + dir, e);
        }
        options = new Options().setCreateIfMissing(true);
        writeOptions = new WriteOptions().setSync(true);
        try {
            db = RocksDB.open(options, dir.toString());
        } catch (RocksDBException e) {
            writeOptions.close();
            options.close();
            throw new MetadataStoreException("cannot open metadata store " + dir + ": " + e.getMessage(), e);
        }
        try {
            long stored = readLong(REVISION_KEY);
            revision = stored > 0 ? stored : LEGACY_REVISION;
            try {
                SecretCipher.warnClear("metadata store " + dir, secrets, Stream.concat(
                        scan(HOST_PREFIX, HostRecord.class, false).stream(),
                        scan(NODE_PREFIX, NodeRecord.class, false).stream()));
            } catch (IllegalArgumentException e) {
                // a corrupt record fails where it is read, not here
            }
        } catch (MetadataStoreException e) {
            close();
            throw e;
        }
    }

    @Override
    public Optional<VolumeRecord> volume(String name) {
        return get(VOLUME_PREFIX + name, VolumeRecord.class);
    }

    @Override
    public List<VolumeRecord> volumes() {
        return scan(VOLUME_PREFIX, VolumeRecord.class);
    }

    @Override
    public Optional<Versioned<VolumeRecord>> volumeVersioned(String name) {
        synchronized (volumeLock) { // the record and its revision key, as one write left them
            return volume(name).map(v -> new Versioned<>(v, revisionOf(name)));
        }
    }

    @Override
    public void putVolume(VolumeRecord volume) {
        synchronized (volumeLock) {
            writeVolume(volume);
        }
    }

    @Override
    public boolean replaceVolume(String name, long expectedRevision, VolumeRecord next) {
        MetadataStore.checkReplace(name, expectedRevision, next);
        synchronized (volumeLock) {
            long current = get(VOLUME_PREFIX + name, VolumeRecord.class).isPresent() ? revisionOf(name) : 0;
            if (current != expectedRevision) {
                return false;
            }
            writeVolume(next);
            return true;
        }
    }

    /** Puts the record, its new revision and the counter in one batch; caller holds {@link #volumeLock}. */
    private void writeVolume(VolumeRecord volume) {
        String key = VOLUME_PREFIX + volume.name();
        long next = revision + 1;
        try (var batch = new WriteBatch()) {
            batch.put(key(key), Json.write(volume).getBytes(StandardCharsets.UTF_8));
            batch.put(key(VOLUME_REVISION_PREFIX + volume.name()), longBytes(next));
            batch.put(key(REVISION_KEY), longBytes(next));
            write(batch);
        } catch (RocksDBException e) {
            throw new MetadataStoreException("put " + key + " failed in " + dir, e);
        }
        revision = next;
    }

    /** @return the stored revision of an existing volume key (legacy records: {@link #LEGACY_REVISION}) */
    private long revisionOf(String name) {
        long r = readLong(VOLUME_REVISION_PREFIX + name);
        return r > 0 ? r : LEGACY_REVISION;
    }

    @Override
    public boolean removeVolume(String name, long expectedRevision) {
        MetadataStore.checkRemove(expectedRevision);
        synchronized (volumeLock) {
            if (get(VOLUME_PREFIX + name, VolumeRecord.class).isEmpty() || revisionOf(name) != expectedRevision) {
                return false;
            }
            removeVolume(name);
            return true;
        }
    }

    @Override
    public void removeVolume(String name) {
        synchronized (volumeLock) {
            try (var batch = new WriteBatch()) {
                batch.delete(key(VOLUME_PREFIX + name));
                batch.delete(key(VOLUME_REVISION_PREFIX + name));
                write(batch);
            } catch (RocksDBException e) {
                throw new MetadataStoreException("delete " + VOLUME_PREFIX + name + " failed in " + dir, e);
            }
        }
    }

    @Override
    public Optional<Versioned<HostRecord>> hostVersioned(String hostNqn) {
        synchronized (volumeLock) {
            return get(HOST_PREFIX + hostNqn, HostRecord.class)
                    .map(h -> new Versioned<>(h, readLong(HOST_REVISION_PREFIX + hostNqn)));
        }
    }

    @Override
    public List<Versioned<HostRecord>> hosts() {
        synchronized (volumeLock) {
            return scan(HOST_PREFIX, HostRecord.class).stream()
                    .map(h -> new Versioned<>(h, readLong(HOST_REVISION_PREFIX + h.hostNqn()))).toList();
        }
    }

    @Override
    public boolean replaceHost(String hostNqn, long expectedRevision, HostRecord next) {
        MetadataStore.checkReplaceHost(hostNqn, expectedRevision, next);
        synchronized (volumeLock) {
            long current = readLong(HOST_REVISION_PREFIX + hostNqn); // 0 when absent: host and revision go together
            if (current != expectedRevision) {
                return false;
            }
            long nextRevision = revision + 1;
            try (var batch = new WriteBatch()) {
                batch.put(key(HOST_PREFIX + hostNqn), Json.write(secrets.sealRecord(next)).getBytes(
                        StandardCharsets.UTF_8));
                batch.put(key(HOST_REVISION_PREFIX + hostNqn), longBytes(nextRevision));
                batch.put(key(REVISION_KEY), longBytes(nextRevision));
                write(batch);
            } catch (RocksDBException e) {
                throw new MetadataStoreException("put " + HOST_PREFIX + hostNqn + " failed in " + dir, e);
            }
            revision = nextRevision;
            return true;
        }
    }

    @Override
    public boolean removeHost(String hostNqn, long expectedRevision) {
        MetadataStore.checkRemove(expectedRevision);
        synchronized (volumeLock) {
            if (readLong(HOST_REVISION_PREFIX + hostNqn) != expectedRevision) {
                return false;
            }
            try (var batch = new WriteBatch()) {
                batch.delete(key(HOST_PREFIX + hostNqn));
                batch.delete(key(HOST_REVISION_PREFIX + hostNqn));
                write(batch);
            } catch (RocksDBException e) {
                throw new MetadataStoreException("delete " + HOST_PREFIX + hostNqn + " failed in " + dir, e);
            }
            return true;
        }
    }

    @Override
    public Optional<HostCredentialRecord> hostCredential(String id) {
        return get(HOST_CREDENTIAL_PREFIX + id, HostCredentialRecord.class);
    }

    @Override
    public List<HostCredentialRecord> hostCredentials() {
        return scan(HOST_CREDENTIAL_PREFIX, HostCredentialRecord.class);
    }

    @Override
    public boolean createHostCredential(HostCredentialRecord record) {
        synchronized (volumeLock) { // every host credential write takes it: read and write are one step
            if (hostCredential(record.id()).isPresent()) {
                return false;
            }
            put(HOST_CREDENTIAL_PREFIX + record.id(), record);
            return true;
        }
    }

    @Override
    public boolean removeHostCredential(String id) {
        synchronized (volumeLock) {
            if (hostCredential(id).isEmpty()) {
                return false;
            }
            delete(HOST_CREDENTIAL_PREFIX + id);
            return true;
        }
    }

    /** @return the 8-byte big-endian value of a key, 0 when absent */
    private long readLong(String key) {
        try {
            byte[] value = read(key(key));
            if (value == null) {
                return 0;
            }
            if (value.length != Long.BYTES) {
                throw new MetadataStoreException("corrupt record " + key + ": length=" + value.length
                        + ", must be " + Long.BYTES, null);
            }
            return ByteBuffer.wrap(value).getLong();
        } catch (RocksDBException e) {
            throw new MetadataStoreException("get " + key + " failed in " + dir, e);
        }
    }

    private static byte[] longBytes(long value) {
        return ByteBuffer.allocate(Long.BYTES).putLong(value).array();
    }

    @Override
    public void removeNode(String nodeId) {
        synchronized (volumeLock) {
            delete(NODE_PREFIX + nodeId);
        }
    }

    private void delete(String key) {
        guard.readLock().lock();
        try {
            open().delete(writeOptions, key(key));
        } catch (RocksDBException e) {
            throw new MetadataStoreException("delete " + key + " failed in " + dir, e);
        } finally {
            guard.readLock().unlock();
        }
    }

    @Override
    public Optional<NodeRecord> node(String nodeId) {
        return get(NODE_PREFIX + nodeId, NodeRecord.class);
    }

    @Override
    public List<NodeRecord> nodes() {
        return scan(NODE_PREFIX, NodeRecord.class);
    }

    @Override
    public void putNode(NodeRecord node) {
        synchronized (volumeLock) {
            put(NODE_PREFIX + node.nodeId(), node);
        }
    }

    @Override
    public boolean replaceNode(String nodeId, NodeRecord expected, NodeRecord next) {
        MetadataStore.checkReplaceNode(nodeId, expected, next);
        synchronized (volumeLock) { // every node write takes it: read and write are one step
            if (!java.util.Objects.equals(node(nodeId).orElse(null), expected)) {
                return false;
            }
            put(NODE_PREFIX + nodeId, next);
            return true;
        }
    }

    private <T> Optional<T> get(String key, Class<T> type) {
        try {
            byte[] value = read(key(key));
            return value == null ? Optional.empty() : Optional.of(decode(key, value, type));
        } catch (RocksDBException e) {
            throw new MetadataStoreException("get " + key + " failed in " + dir, e);
        }
    }

    private void put(String key, Object value) {
        guard.readLock().lock();
        try {
            open().put(writeOptions, key(key), Json.write(secrets.sealRecord(value)).getBytes(StandardCharsets.UTF_8));
        } catch (RocksDBException e) {
            throw new MetadataStoreException("put " + key + " failed in " + dir, e);
        } finally {
            guard.readLock().unlock();
        }
    }

    private <T> List<T> scan(String prefix, Class<T> type) {
        return scan(prefix, type, true);
    }

    /** @param opened false: the records as stored, their secrets not opened */
    private <T> List<T> scan(String prefix, Class<T> type, boolean opened) {
        var out = new ArrayList<T>();
        byte[] start = key(prefix);
        guard.readLock().lock();
        try (var readOptions = new ReadOptions(); RocksIterator it = open().newIterator(readOptions)) {
            for (it.seek(start); it.isValid(); it.next()) {
                String k = new String(it.key(), StandardCharsets.UTF_8);
                if (!k.startsWith(prefix)) {
                    break;
                }
                out.add(opened ? decode(k, it.value(), type)
                        : Json.read(new String(it.value(), StandardCharsets.UTF_8), type));
            }
            it.status();
        } catch (RocksDBException e) {
            throw new MetadataStoreException("scan " + prefix + " failed in " + dir, e);
        } finally {
            guard.readLock().unlock();
        }
        return out;
    }

    /**
     * The database, while it is open; the caller holds {@link #guard}'s read lock or is inside one of the guarded
     * calls below, so {@link #close} waits for it instead of freeing the native handle under it (a JVM crash).
     *
     * @throws MetadataStoreUnavailableException once closed
     */
    private RocksDB open() {
        if (closed) {
            throw new MetadataStoreUnavailableException("metadata store closed: " + dir, null);
        }
        return db;
    }

    private byte[] read(byte[] key) throws RocksDBException {
        guard.readLock().lock();
        try {
            return open().get(key);
        } finally {
            guard.readLock().unlock();
        }
    }

    private void write(WriteBatch batch) throws RocksDBException {
        guard.readLock().lock();
        try {
            open().write(writeOptions, batch);
        } finally {
            guard.readLock().unlock();
        }
    }

    private <T> T decode(String key, byte[] value, Class<T> type) {
        T record;
        try {
            record = Json.read(new String(value, StandardCharsets.UTF_8), type);
        } catch (IllegalArgumentException e) {
            throw new MetadataStoreException("corrupt record " + key + ": " + e.getMessage(), e);
        }
        return secrets.openRecord(record);
    }

    private static byte[] key(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Closes the database once every call in progress returned (a liveness sweep on a worker thread may still be
     * reading when the server closes); later calls throw {@link MetadataStoreUnavailableException}.
     */
    @Override
    public void close() {
        guard.writeLock().lock();
        try {
            if (!closed) {
                closed = true;
                db.close();
                writeOptions.close();
                options.close();
            }
        } finally {
            guard.writeLock().unlock();
        }
    }
}
