package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.Json;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The embedded default {@link MetadataStore}: one RocksDB database in a directory. Keys are
 * {@code "volume/<name>"} and {@code "node/<nodeId>"} (UTF-8), values the records as JSON. Writes use
 * {@code sync=true} (fsync of the WAL before returning), so an acknowledged change survives a crash.
 * Only one process may open the directory (RocksDB's LOCK file); a second open fails with
 * {@link MetadataStoreException}.
 */
public final class RocksMetadataStore implements MetadataStore {
    private static final String VOLUME_PREFIX = "volume/";
    private static final String NODE_PREFIX = "node/";

    private final Options options;
    private final WriteOptions writeOptions;
    private final RocksDB db;
    private final Path dir;
    private boolean closed;

    /**
     * Opens (creating if needed) the database in {@code dir}.
     *
     * @throws MetadataStoreException when the directory cannot be created or the database cannot be opened
     */
    public RocksMetadataStore(Path dir) {
        RocksDB.loadLibrary();
        this.dir = dir;
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
    public void putVolume(VolumeRecord volume) {
        put(VOLUME_PREFIX + volume.name(), volume);
    }

    @Override
    public void removeVolume(String name) {
        delete(VOLUME_PREFIX + name);
    }

    @Override
    public void removeNode(String nodeId) {
        delete(NODE_PREFIX + nodeId);
    }

    private void delete(String key) {
        try {
            db.delete(writeOptions, key(key));
        } catch (RocksDBException e) {
            throw new MetadataStoreException("delete " + key + " failed in " + dir, e);
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
        put(NODE_PREFIX + node.nodeId(), node);
    }

    private <T> Optional<T> get(String key, Class<T> type) {
        try {
            byte[] value = db.get(key(key));
            return value == null ? Optional.empty() : Optional.of(decode(key, value, type));
        } catch (RocksDBException e) {
            throw new MetadataStoreException("get " + key + " failed in " + dir, e);
        }
    }

    private void put(String key, Object value) {
        try {
            db.put(writeOptions, key(key), Json.write(value).getBytes(StandardCharsets.UTF_8));
        } catch (RocksDBException e) {
            throw new MetadataStoreException("put " + key + " failed in " + dir, e);
        }
    }

    private <T> List<T> scan(String prefix, Class<T> type) {
        var out = new ArrayList<T>();
        byte[] start = key(prefix);
        try (var readOptions = new ReadOptions(); RocksIterator it = db.newIterator(readOptions)) {
            for (it.seek(start); it.isValid(); it.next()) {
                String k = new String(it.key(), StandardCharsets.UTF_8);
                if (!k.startsWith(prefix)) {
                    break;
                }
                out.add(decode(k, it.value(), type));
            }
            it.status();
        } catch (RocksDBException e) {
            throw new MetadataStoreException("scan " + prefix + " failed in " + dir, e);
        }
        return out;
    }

    private static <T> T decode(String key, byte[] value, Class<T> type) {
        try {
            return Json.read(new String(value, StandardCharsets.UTF_8), type);
        } catch (IllegalArgumentException e) {
            throw new MetadataStoreException("corrupt record " + key + ": " + e.getMessage(), e);
        }
    }

    private static byte[] key(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            db.close();
            writeOptions.close();
            options.close();
        }
    }
}
