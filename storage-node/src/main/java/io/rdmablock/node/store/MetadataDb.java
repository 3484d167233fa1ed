package io.rdmablock.node.store;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongConsumer;

import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The store's metadata in RocksDB.
 *
 * <pre>
 * key                                   value
 * "v/" id                               volume row: u8 version=1, UTF name, i64 sizeBytes, i32 lbaSizeBytes,
 *                                       UTF state, i32 hostCount, hostCount x UTF hostnqn (DataOutput encoding)
 * "a/" id "/" chunk (16 hex digits)     empty: the 1 MiB chunk has been written at least once
 * </pre>
 *
 * Volume rows are written with {@code sync=true} (WAL fsync before return); chunk keys with {@code sync=false}.
 */
final class MetadataDb implements AutoCloseable {

    /** One row of the volume table. */
    record Row(String id, String name, long sizeBytes, int lbaSizeBytes, VolumeState state, Set<String> allowedHosts) {
        Row withState(VolumeState s) {
            return new Row(id, name, sizeBytes, lbaSizeBytes, s, allowedHosts);
        }

        Row withSize(long size) {
            return new Row(id, name, size, lbaSizeBytes, state, allowedHosts);
        }

        Row withHosts(Set<String> hosts) {
            return new Row(id, name, sizeBytes, lbaSizeBytes, state, hosts);
        }
    }

    static {
        RocksDB.loadLibrary();
    }

    private final Path path;
    private final Options options;
    private final RocksDB db;
    private final WriteOptions syncWrite;
    private final WriteOptions asyncWrite;
    private volatile boolean closed;

    private MetadataDb(Path path, Options options, RocksDB db) {
        this.path = path;
        this.options = options;
        this.db = db;
        this.syncWrite = new WriteOptions().setSync(true);
        this.asyncWrite = new WriteOptions().setSync(false);
    }

    static MetadataDb open(Path path) {
        Options o = new Options().setCreateIfMissing(true);
        try {
            return new MetadataDb(path, o, RocksDB.open(o, path.toString()));
        } catch (RocksDBException e) {
            o.close();
            throw new StoreException("RocksDB open failed: path=" + path + ": " + e.getMessage(), e);
        }
    }

    void putVolume(Row row) {
        try {
            db.put(syncWrite, key("v/" + row.id()), encode(row));
        } catch (RocksDBException e) {
            throw fail("put volume id=" + row.id(), e);
        }
    }

    Row getVolume(String id) {
        try {
            byte[] v = db.get(key("v/" + id));
            if (v == null) {
                throw new java.util.NoSuchElementException("no volume row: id=" + id);
            }
            return decode(id, v);
        } catch (RocksDBException e) {
            throw fail("get volume id=" + id, e);
        }
    }

    void deleteVolume(String id) {
        try {
            db.delete(syncWrite, key("v/" + id));
        } catch (RocksDBException e) {
            throw fail("delete volume id=" + id, e);
        }
    }

    void deleteVolumeAndChunks(String id) {
        try (WriteBatch b = new WriteBatch()) {
            b.deleteRange(key("a/" + id + "/"), key("a/" + id + "0"));
            b.delete(key("v/" + id));
            db.write(syncWrite, b);
        } catch (RocksDBException e) {
            throw fail("delete volume id=" + id, e);
        }
    }

    List<Row> loadVolumes() {
        List<Row> rows = new ArrayList<>();
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(key("v/")); it.isValid(); it.next()) {
                String k = new String(it.key(), StandardCharsets.UTF_8);
                if (!k.startsWith("v/")) {
                    break;
                }
                rows.add(decode(k.substring(2), it.value()));
            }
        }
        return rows;
    }

    void putChunk(String id, long chunk) {
        if (closed) {
            return;
        }
        try {
            db.put(asyncWrite, key(chunkKey(id, chunk)), new byte[0]);
        } catch (RocksDBException e) {
            throw fail("put chunk id=" + id + ", chunk=" + chunk, e);
        }
    }

    void loadChunks(String id, LongConsumer sink) {
        String prefix = "a/" + id + "/";
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(key(prefix)); it.isValid(); it.next()) {
                String k = new String(it.key(), StandardCharsets.UTF_8);
                if (!k.startsWith(prefix)) {
                    break;
                }
                sink.accept(Long.parseUnsignedLong(k.substring(prefix.length()), 16));
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            db.syncWal();
        } catch (RocksDBException e) {
            // best effort: chunk bits are accounting only
        }
        db.close();
        syncWrite.close();
        asyncWrite.close();
        options.close();
    }

    private static String chunkKey(String id, long chunk) {
        return "a/" + id + "/" + String.format("%016x", chunk);
    }

    private static byte[] key(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private StoreException fail(String what, RocksDBException e) {
        return new StoreException("RocksDB " + what + " failed: path=" + path + ": " + e.getMessage(), e);
    }

    private static byte[] encode(Row r) {
        try {
            ByteArrayOutputStream bo = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bo);
            out.writeByte(1);
            out.writeUTF(r.name());
            out.writeLong(r.sizeBytes());
            out.writeInt(r.lbaSizeBytes());
            out.writeUTF(r.state().name());
            out.writeInt(r.allowedHosts().size());
            for (String h : r.allowedHosts()) {
                out.writeUTF(h);
            }
            return bo.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private Row decode(String id, byte[] v) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(v));
            int version = in.readUnsignedByte();
            if (version != 1) {
                throw new StoreException("unknown volume row version: id=" + id + ", version=" + version
                        + ", supported=1", 0);
            }
            String name = in.readUTF();
            long size = in.readLong();
            int lba = in.readInt();
            VolumeState state = VolumeState.valueOf(in.readUTF());
            int n = in.readInt();
            Set<String> hosts = new LinkedHashSet<>();
            for (int i = 0; i < n; i++) {
                hosts.add(in.readUTF());
            }
            return new Row(id, name, size, lba, state, Set.copyOf(hosts));
        } catch (IOException e) {
            throw new StoreException("corrupt volume row: id=" + id + ", path=" + path + ": " + e, e);
        }
    }
}
