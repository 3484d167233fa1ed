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
 * "v/" id                               volume row: u8 version=2, UTF name, i64 sizeBytes, i32 lbaSizeBytes,
 *                                       UTF state, i32 hostCount, hostCount x UTF hostnqn, i32 clusterShift
 *                                       (DataOutput encoding; version 1 has no clusterShift: a flat volume, 0)
 * "m/" id "/" map "/" cluster           i64 big endian physical cluster of logical {@code cluster} in map {@code map}
 *                                       (both 16 hex digits; map 0 = the live map, else a snapshot id)
 * "s/" id "/" snapshot (16 hex digits)  snapshot row: u8 version=1, UTF name, i64 createdMs, i64 sizeBytes
 * "a/" id "/" chunk (16 hex digits)     empty: the 1 MiB chunk has been written at least once
 * "e/" id                               i64 big endian: the highest replication epoch accepted as a secondary
 *                                       (docs/replication.md); absent = 0
 * "r/" id                               UTF: the request id of the last rollback applied to the volume, written in
 *                                       the rollback's batch (docs/snapshots.md, "Rollback"); absent = none
 * </pre>
 *
 * Volume rows, epochs and snapshots are written with {@code sync=true} (WAL fsync before return); chunk keys with
 * {@code sync=false}; live-map keys by {@link MapWorker} in batches, synced when a command needs them durable.
 */
final class MetadataDb implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MetadataDb.class);

    /** One row of the volume table. */
    record Row(String id, String name, long sizeBytes, int lbaSizeBytes, StoreVolumeState state,
               Set<String> allowedHosts, int clusterShift) {
        /** A flat volume's row. */
        Row(String id, String name, long sizeBytes, int lbaSizeBytes, StoreVolumeState state,
            Set<String> allowedHosts) {
            this(id, name, sizeBytes, lbaSizeBytes, state, allowedHosts, 0);
        }

        Row withState(StoreVolumeState s) {
            return new Row(id, name, sizeBytes, lbaSizeBytes, s, allowedHosts, clusterShift);
        }

        Row withSize(long size) {
            return new Row(id, name, size, lbaSizeBytes, state, allowedHosts, clusterShift);
        }

        Row withHosts(Set<String> hosts) {
            return new Row(id, name, sizeBytes, lbaSizeBytes, state, hosts, clusterShift);
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

    /** Bytes kept in {@code <meta>.reserve} so the database can always be reopened on a full file system. */
    static final long RESERVE_BYTES = 8L << 20;

    /**
     * Opens (creating if missing) the database at {@code path}. The metadata is tiny, so the write buffer (and with it
     * the write-ahead log RocksDB preallocates, about 1.1 x the write buffer) is 1 MiB rather than the default 64 MiB.
     * Reopening after a crash replays the log into a new table file, which needs free space: a file
     * {@code <path>.reserve} of {@link #RESERVE_BYTES} is kept beside the database and released when an open fails
     * with "No space left on device", so a node killed on a full file system restarts (its writers then get
     * "capacity exceeded" as before). The reserve is made again at the next open with room for it.
     *
     * @throws StoreException when the database cannot be opened (message names the path and RocksDB's reason)
     */
    static MetadataDb open(Path path) {
        Path reserve = path.resolveSibling(path.getFileName() + ".reserve");
        try {
            return openOnce(path);
        } catch (StoreException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left") || !java.nio.file.Files.exists(reserve)) {
                throw e;
            }
            LOG.warn("metadata database could not be reopened on a full file system ({}); releasing the {} MiB "
                    + "reserve {} and retrying. Free space under {}.", e.getMessage(), RESERVE_BYTES >> 20, reserve,
                    path.getParent());
            try {
                java.nio.file.Files.delete(reserve);
            } catch (IOException io) {
                e.addSuppressed(io);
                throw e;
            }
            return openOnce(path);
        } finally {
            keepReserve(reserve);
        }
    }

    private static MetadataDb openOnce(Path path) {
        Options o = new Options().setCreateIfMissing(true).setWriteBufferSize(1L << 20)
                .setMaxLogFileSize(1L << 20).setKeepLogFileNum(2);
        try {
            return new MetadataDb(path, o, RocksDB.open(o, path.toString()));
        } catch (RocksDBException e) {
            o.close();
            throw new StoreException("RocksDB open failed: path=" + path + ": " + e.getMessage(), e);
        }
    }

    /** Writes the reserve file when it is missing and the file system has room for it twice over. */
    private static void keepReserve(Path reserve) {
        try {
            if (java.nio.file.Files.exists(reserve)
                    || java.nio.file.Files.getFileStore(reserve.getParent()).getUsableSpace() < 2 * RESERVE_BYTES) {
                return;
            }
            Path tmp = reserve.resolveSibling(reserve.getFileName() + ".tmp");
            try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.TRUNCATE_EXISTING, java.nio.file.StandardOpenOption.WRITE)) {
                java.nio.ByteBuffer zeros = java.nio.ByteBuffer.allocate(1 << 20);
                for (long done = 0; done < RESERVE_BYTES; done += 1 << 20) {
                    zeros.clear();
                    while (zeros.hasRemaining()) {
                        ch.write(zeros); // real blocks (not a sparse file), so deleting it frees space
                    }
                }
                ch.force(true);
            }
            java.nio.file.Files.move(tmp, reserve, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            LOG.debug("metadata reserve not written: {}", e.toString());
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
            b.deleteRange(key("m/" + id + "/"), key("m/" + id + "0"));
            b.deleteRange(key("s/" + id + "/"), key("s/" + id + "0"));
            b.delete(key("v/" + id));
            b.delete(key("e/" + id));
            b.delete(key("r/" + id));
            db.write(syncWrite, b);
        } catch (RocksDBException e) {
            throw fail("delete volume id=" + id, e);
        }
    }

    /** Writes the epoch of volume {@code id}, synced (durable when this returns). */
    void putEpoch(String id, long epoch) {
        try {
            db.put(syncWrite, key("e/" + id), java.nio.ByteBuffer.allocate(8).putLong(epoch).array());
        } catch (RocksDBException e) {
            throw fail("put epoch id=" + id + ", epoch=" + epoch, e);
        }
    }

    /** The epoch of volume {@code id}, 0 when none was written. */
    long getEpoch(String id) {
        try {
            byte[] v = db.get(key("e/" + id));
            if (v == null) {
                return 0;
            }
            if (v.length != 8) {
                throw new StoreException("corrupt epoch row: id=" + id + ", lengthBytes=" + v.length + ", expected=8",
                        0);
            }
            return java.nio.ByteBuffer.wrap(v).getLong();
        } catch (RocksDBException e) {
            throw fail("get epoch id=" + id, e);
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

    // ---- cluster maps (mapped volumes) ----

    /** Adds to {@code b}: logical cluster {@code c} of the live map of {@code id} is physical {@code phys}, or none when -1. */
    static void putLive(WriteBatch b, String id, long c, long phys) throws RocksDBException {
        if (phys < 0) {
            b.delete(key(mapKey(id, 0, c)));
        } else {
            b.put(key(mapKey(id, 0, c)), java.nio.ByteBuffer.allocate(8).putLong(phys).array());
        }
    }

    /** Writes a batch of map changes; with {@code sync} the WAL is fsynced before this returns. */
    void write(WriteBatch b, boolean sync) {
        try {
            db.write(sync ? syncWrite : asyncWrite, b);
        } catch (RocksDBException e) {
            throw fail("write cluster map", e);
        }
    }

    /** Syncs the WAL: every map change written before is durable. */
    void syncWal() {
        try {
            db.syncWal();
        } catch (RocksDBException e) {
            throw fail("sync WAL", e);
        }
    }

    /** Writes snapshot {@code s} of volume {@code id} (row and frozen map), synced. */
    void putSnapshot(String id, ClusterMap.Snap s) {
        try (WriteBatch b = new WriteBatch()) {
            long[] map = s.map();
            for (int c = 0; c < map.length; c++) {
                if (map[c] != 0) {
                    b.put(key(mapKey(id, s.id(), c)), java.nio.ByteBuffer.allocate(8).putLong(map[c] - 1).array());
                }
            }
            b.put(key(snapKey(id, s.id())), snapRow(s));
            db.write(syncWrite, b);
        } catch (RocksDBException | IOException e) {
            throw new StoreException("put snapshot failed: id=" + id + ", snapshot=" + s.name() + ": " + e, e);
        }
    }

    /** Rewrites the row of snapshot {@code s} of volume {@code id} (its name changed; the map is unchanged), synced. */
    void putSnapshotRow(String id, ClusterMap.Snap s) {
        try {
            db.put(syncWrite, key(snapKey(id, s.id())), snapRow(s));
        } catch (RocksDBException | IOException e) {
            throw new StoreException("put snapshot row failed: id=" + id + ", snapshot=" + s.name() + ": " + e, e);
        }
    }

    private static byte[] snapRow(ClusterMap.Snap s) throws IOException {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bo);
        out.writeByte(1);
        out.writeUTF(s.name());
        out.writeLong(s.createdMs());
        out.writeLong(s.sizeBytes());
        return bo.toByteArray();
    }

    /** Removes snapshot {@code snapId} of volume {@code id} (row and map), synced. */
    void deleteSnapshot(String id, long snapId) {
        try (WriteBatch b = new WriteBatch()) {
            b.delete(key(snapKey(id, snapId)));
            b.deleteRange(key(mapKey(id, snapId, 0)), key(mapKey(id, snapId, -1) + "0"));
            db.write(syncWrite, b);
        } catch (RocksDBException e) {
            throw fail("delete snapshot id=" + id + ", snapshot=" + snapId, e);
        }
    }

    /** Replaces the live map of {@code id} with {@code live} (physical + 1 per cluster, 0 = none), synced. */
    void replaceLive(String id, long[] live) {
        replaceLive(id, live, null);
    }

    /**
     * As {@link #replaceLive(String, long[])}, and records {@code requestId} (when not null) as the volume's last
     * applied rollback in the same synced batch: after a crash both are there or neither is.
     */
    void replaceLive(String id, long[] live, String requestId) {
        try (WriteBatch b = new WriteBatch()) {
            if (requestId != null) {
                b.put(key("r/" + id), key(requestId));
            }
            b.deleteRange(key(mapKey(id, 0, 0)), key(mapKey(id, 0, -1) + "0"));
            for (int c = 0; c < live.length; c++) {
                if (live[c] != 0) {
                    b.put(key(mapKey(id, 0, c)), java.nio.ByteBuffer.allocate(8).putLong(live[c] - 1).array());
                }
            }
            db.write(syncWrite, b);
        } catch (RocksDBException e) {
            throw fail("replace live map id=" + id, e);
        }
    }

    /** The request id of the last rollback applied to volume {@code id} ({@link #replaceLive}), or null. */
    String lastRollback(String id) {
        try {
            byte[] v = db.get(key("r/" + id));
            return v == null ? null : new String(v, StandardCharsets.UTF_8);
        } catch (RocksDBException e) {
            throw fail("get rollback id=" + id, e);
        }
    }

    /** Calls {@code sink(cluster, physical)} for every entry of map {@code mapId} of volume {@code id}. */
    void loadMap(String id, long mapId, java.util.function.BiConsumer<Long, Long> sink) {
        String prefix = "m/" + id + "/" + String.format("%016x", mapId) + "/";
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(key(prefix)); it.isValid(); it.next()) {
                String k = new String(it.key(), StandardCharsets.UTF_8);
                if (!k.startsWith(prefix)) {
                    break;
                }
                sink.accept(Long.parseUnsignedLong(k.substring(prefix.length()), 16),
                        java.nio.ByteBuffer.wrap(it.value()).getLong());
            }
        }
    }

    /** The snapshot rows of volume {@code id}: id, name, createdMs, sizeBytes (maps empty, filled by the caller). */
    List<ClusterMap.Snap> loadSnapshots(String id) {
        String prefix = "s/" + id + "/";
        List<ClusterMap.Snap> out = new ArrayList<>();
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(key(prefix)); it.isValid(); it.next()) {
                String k = new String(it.key(), StandardCharsets.UTF_8);
                if (!k.startsWith(prefix)) {
                    break;
                }
                long snapId = Long.parseUnsignedLong(k.substring(prefix.length()), 16);
                DataInputStream in = new DataInputStream(new ByteArrayInputStream(it.value()));
                int version = in.readUnsignedByte();
                if (version != 1) {
                    throw new StoreException("unknown snapshot row version: id=" + id + ", snapshot=" + snapId
                            + ", version=" + version + ", supported=1", 0);
                }
                out.add(new ClusterMap.Snap(snapId, in.readUTF(), in.readLong(), in.readLong(), null));
            }
        } catch (IOException e) {
            throw new StoreException("corrupt snapshot row: id=" + id + ", path=" + path + ": " + e, e);
        }
        return out;
    }

    private static String mapKey(String id, long mapId, long c) {
        return "m/" + id + "/" + String.format("%016x", mapId) + "/" + String.format("%016x", c);
    }

    private static String snapKey(String id, long snapId) {
        return "s/" + id + "/" + String.format("%016x", snapId);
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
            out.writeByte(2);
            out.writeUTF(r.name());
            out.writeLong(r.sizeBytes());
            out.writeInt(r.lbaSizeBytes());
            out.writeUTF(r.state().name());
            out.writeInt(r.allowedHosts().size());
            for (String h : r.allowedHosts()) {
                out.writeUTF(h);
            }
            out.writeInt(r.clusterShift());
            return bo.toByteArray();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private Row decode(String id, byte[] v) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(v));
            int version = in.readUnsignedByte();
            if (version != 1 && version != 2) {
                throw new StoreException("unknown volume row version: id=" + id + ", version=" + version
                        + ", supported=1,2", 0);
            }
            String name = in.readUTF();
            long size = in.readLong();
            int lba = in.readInt();
            StoreVolumeState state = StoreVolumeState.valueOf(in.readUTF());
            int n = in.readInt();
            Set<String> hosts = new LinkedHashSet<>();
            for (int i = 0; i < n; i++) {
                hosts.add(in.readUTF());
            }
            int clusterShift = version >= 2 ? in.readInt() : 0;
            return new Row(id, name, size, lba, state, Set.copyOf(hosts), clusterShift);
        } catch (IOException e) {
            throw new StoreException("corrupt volume row: id=" + id + ", path=" + path + ": " + e, e);
        }
    }
}
