package io.rdmablock.node.store;

/**
 * Options of a {@link VolumeStore}, validated once.
 *
 * @param backend              {@code null} = auto: io_uring when {@code io_uring_setup(2)} works and supports the needed
 *                             opcodes, else the thread pool (one log line says which and why); an explicit value is
 *                             used as is and fails {@link VolumeStore#open} if unavailable
 * @param poolThreads          worker threads of the thread-pool backend (shared by its queues), 1-1024
 * @param directIoAlignBytes   0 = query the file's direct-I/O alignment ({@code statx(2)} {@code STATX_DIOALIGN},
 *                             else 4096); a power of two 512-65536 overrides it (tests use 4096 to exercise the
 *                             misaligned path of 512-byte LBAs)
 * @param preallocate          true = reserve every volume's space at create and grow ({@code fallocate(2)}, KEEP_SIZE):
 *                             first writes then skip block allocation, and a create or grow that does not fit fails
 *                             at once with {@code ENOSPC}; the filesystem space is used up front (thick provisioning:
 *                             free space drops by the full size; the allocation map, NUSE, still counts written
 *                             chunks). Deallocate (punch hole) still frees space. Default false (thin: sparse files)
 * @param clusterBytes         layout of volumes created from now on: 0 = flat (byte n of the volume at byte n of its
 *                             file; no snapshots), else the cluster size of the allocation map that snapshots need
 *                             (a power of two, 64 KiB-16 MiB; docs/snapshots.md). A volume keeps the layout it was
 *                             created with. Default {@link #DEFAULT_CLUSTER_BYTES}
 */
public record StoreOptions(IoBackend backend, int poolThreads, int directIoAlignBytes, boolean preallocate,
                           int clusterBytes) {

    /** Default cluster size of new volumes: 1 MiB (measured in docs/snapshots.md, "Cluster size"). */
    public static final int DEFAULT_CLUSTER_BYTES = 1 << 20;
    /** Smallest cluster size: 64 KiB. */
    public static final int MIN_CLUSTER_BYTES = 1 << 16;
    /** Largest cluster size: 16 MiB. */
    public static final int MAX_CLUSTER_BYTES = 1 << 24;

    /**
     * System property selecting the backend: auto | io_uring | threadpool. The node reads this and the properties
     * below once ({@code io.rdmablock.node.NodeConfiguration}, docs/configuration.md).
     */
    public static final String BACKEND_PROPERTY = "rdmablock.store.backend";
    /** System property for {@link #poolThreads()}. */
    public static final String POOL_THREADS_PROPERTY = "rdmablock.store.poolThreads";
    /** System property for {@link #directIoAlignBytes()}. */
    public static final String DIO_ALIGN_PROPERTY = "rdmablock.store.directIoAlignBytes";
    /** System property for {@link #preallocate()}: true | false (default). */
    public static final String PREALLOCATE_PROPERTY = "rdmablock.store.preallocate";
    /** System property for {@link #clusterBytes()}: 0 (flat) or a power of two 65536-16777216. */
    public static final String CLUSTER_BYTES_PROPERTY = "rdmablock.store.clusterBytes";

    public StoreOptions {
        if (poolThreads < 1 || poolThreads > 1024) {
            throw new IllegalArgumentException("invalid poolThreads: poolThreads=" + poolThreads + ", min=1, max=1024");
        }
        if (directIoAlignBytes != 0 && (Integer.bitCount(directIoAlignBytes) != 1 || directIoAlignBytes < 512
                || directIoAlignBytes > 65536)) {
            throw new IllegalArgumentException("invalid directIoAlignBytes: directIoAlignBytes=" + directIoAlignBytes
                    + ", allowed=0 or a power of two 512-65536");
        }
        if (clusterBytes != 0 && (Integer.bitCount(clusterBytes) != 1 || clusterBytes < MIN_CLUSTER_BYTES
                || clusterBytes > MAX_CLUSTER_BYTES)) {
            throw new IllegalArgumentException("invalid clusterBytes: clusterBytes=" + clusterBytes
                    + ", allowed=0 (flat) or a power of two " + MIN_CLUSTER_BYTES + "-" + MAX_CLUSTER_BYTES);
        }
    }

    /** The default cluster size. */
    public StoreOptions(IoBackend backend, int poolThreads, int directIoAlignBytes, boolean preallocate) {
        this(backend, poolThreads, directIoAlignBytes, preallocate, DEFAULT_CLUSTER_BYTES);
    }

    /** Thin provisioning ({@code preallocate = false}). */
    public StoreOptions(IoBackend backend, int poolThreads, int directIoAlignBytes) {
        this(backend, poolThreads, directIoAlignBytes, false);
    }

    /** Defaults: auto backend, 32 pool threads, queried alignment, thin provisioning. */
    public static StoreOptions defaults() {
        return new StoreOptions(null, 32, 0, false, DEFAULT_CLUSTER_BYTES);
    }

    /** The same options with another backend ({@code null} = auto). */
    public StoreOptions withBackend(IoBackend b) {
        return new StoreOptions(b, poolThreads, directIoAlignBytes, preallocate, clusterBytes);
    }

    /** The same options with another direct-I/O alignment override (0 = query). */
    public StoreOptions withDirectIoAlignBytes(int align) {
        return new StoreOptions(backend, poolThreads, align, preallocate, clusterBytes);
    }

    /** The same options with preallocation on or off. */
    public StoreOptions withPreallocate(boolean on) {
        return new StoreOptions(backend, poolThreads, directIoAlignBytes, on, clusterBytes);
    }

    /** The same options with another layout for new volumes (0 = flat). */
    public StoreOptions withClusterBytes(int bytes) {
        return new StoreOptions(backend, poolThreads, directIoAlignBytes, preallocate, bytes);
    }

    /** Parses {@code auto | io_uring | threadpool} ({@code auto} gives {@code null}). */
    public static IoBackend parseBackend(String s) {
        return switch (s.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "auto", "" -> null;
            case "io_uring", "iouring", "io-uring" -> IoBackend.IO_URING;
            case "threadpool", "thread_pool", "pool" -> IoBackend.THREAD_POOL;
            default -> throw new IllegalArgumentException("invalid " + BACKEND_PROPERTY + ": value=" + s
                    + ", allowed=auto|io_uring|threadpool");
        };
    }
}
