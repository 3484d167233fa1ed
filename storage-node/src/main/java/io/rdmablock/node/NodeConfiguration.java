package io.rdmablock.node;

import io.rdmablock.node.store.StoreFaults;
import io.rdmablock.node.store.StoreOptions;
import io.rdmablock.node.target.ConnectLimits;
import io.rdmablock.node.target.DhchapLimits;
import io.rdmablock.node.target.TargetTuning;
import io.rdmablock.rdma.config.Knobs;

import java.util.Objects;
import java.util.function.Function;

/**
 * The storage node's {@code -D} system-property knobs, in one place: each named here with its default, unit and
 * bounds, read and checked once at start ({@link #fromSystemProperties()}: {@link NodeCommand} before anything
 * starts, or {@link StorageNode}'s one-argument constructor) and handed to the parts that use them at construction:
 * {@link #target()} to the fabric target (its pollers, subsystems, controller table, authentication work and each
 * queue's volume I/O), {@link #replicaOpenTimeoutNs()} to the replication (forward queues, peer links, resync
 * channels), {@link #backgroundLatencySlackPct()} to the background budget, {@link #storeOptions()} and {@link #storeFaults()} to the volume store. No other class of the node reads
 * a system property. The command line options ({@link NodeCommand}, {@link NodeConfig}) are the other half of the
 * node's configuration; docs/configuration.md lists both.
 *
 * <p>An unset or blank property takes its default. A value that is not a number (or not one of the allowed words)
 * or is out of its bounds fails with an {@link IllegalArgumentException} naming the property, the value and the
 * bounds, e.g. {@code invalid rdmablock.node.storeWaitMin: value=0, min=1, max=2147483647}.
 *
 * @param target               the fabric target's knobs: {@link #STORE_WAIT_MIN}, {@link #EPOCH_WINDOW},
 *                             {@link #REGISTER_STORE_BUFFERS}, the connect limits ({@link #MAX_CONTROLLERS} ..
 *                             {@link #MAX_KATO_MS}) and the DH-HMAC-CHAP limits ({@link #DHCHAP_THREADS} ..
 *                             {@link #DHCHAP_REAUTH_INTERVAL_MS})
 * @param replicaOpenTimeoutMs {@link #REPLICA_OPEN_TIMEOUT_MS}
 * @param storeOptions         {@link #STORE_BACKEND}, {@link #STORE_POOL_THREADS},
 *                             {@link #STORE_DIRECT_IO_ALIGN_BYTES}, {@link #STORE_PREALLOCATE}
 * @param storeFaults          {@link #STORE_FAULTS} as given (checked), or null for none
 * @param backgroundLatencySlackPct {@link #BACKGROUND_LATENCY_SLACK_PCT}
 */
public record NodeConfiguration(TargetTuning target, long replicaOpenTimeoutMs, StoreOptions storeOptions,
                                String storeFaults, int backgroundLatencySlackPct) {

    // ---- fabric target ----------------------------------------------------------------------------------------

    /**
     * Outstanding commands, all at the store, from which an idle poller waits on the store at once instead of
     * spinning first; a value above a queue's entries turns the wait off (docs/bench.md "Node store wait").
     * Commands, default {@value TargetTuning#DEFAULT_STORE_WAIT_MIN}, 1..2147483647. Read by the target's pollers.
     */
    public static final String STORE_WAIT_MIN = "rdmablock.node.storeWaitMin";
    /**
     * How far above the volume's epoch the management plane last told the node a forwarded command may raise a
     * secondary copy's epoch (docs/failover.md). Epochs, default {@value TargetTuning#DEFAULT_EPOCH_WINDOW},
     * 1..1000000. Read by each volume's subsystem.
     */
    public static final String EPOCH_WINDOW = "rdmablock.node.epochWindow";
    /**
     * {@code false} skips registering each I/O queue's buffers with its store queue (io_uring fixed buffers), for
     * A/B measurements and kernels that refuse them. {@code true | false}, default true. Read by the local volume
     * I/O of each queue.
     */
    public static final String REGISTER_STORE_BUFFERS = "rdmablock.target.registerStoreBuffers";

    /** Live controllers of volume subsystems on the node; default 4096, 1..1048576 ({@link ConnectLimits}). */
    public static final String MAX_CONTROLLERS = "rdmablock.node.maxControllers";
    /** Live discovery controllers on the node; default 1024, 1..1048576 ({@link ConnectLimits}). */
    public static final String MAX_DISCOVERY_CONTROLLERS = "rdmablock.node.maxDiscoveryControllers";
    /** Live controllers of one host NQN on the node; default 256, 1..1048576 ({@link ConnectLimits}). */
    public static final String MAX_CONTROLLERS_PER_HOST = "rdmablock.node.maxControllersPerHost";
    /** Connected queues (admin and I/O) of one host NQN; default 4096, 1..16777216 ({@link ConnectLimits}). */
    public static final String MAX_QUEUES_PER_HOST = "rdmablock.node.maxQueuesPerHost";
    /** Registered queue memory of the node, bytes; default 8 GiB, 1 MiB..1 TiB ({@link ConnectLimits}). */
    public static final String MAX_REGISTERED_BYTES = "rdmablock.node.maxRegisteredBytes";
    /** KATO given to a volume controller asking for 0, ms; default 120000, 1000..maxKatoMs ({@link ConnectLimits}). */
    public static final String DEFAULT_KATO_MS = "rdmablock.node.defaultKatoMs";
    /** Largest KATO of any controller, ms; default 3600000, 1000..86400000 ({@link ConnectLimits}). */
    public static final String MAX_KATO_MS = "rdmablock.node.maxKatoMs";

    /** DH-HMAC-CHAP worker threads; default 1, 1..16 ({@link DhchapLimits}). */
    public static final String DHCHAP_THREADS = "rdmablock.node.dhchap.threads";
    /** DH computations waiting for a worker; default 64, 1..65536 ({@link DhchapLimits}). */
    public static final String DHCHAP_QUEUE_MAX = "rdmablock.node.dhchap.queueMax";
    /** DH work per peer IP address, cost units per second; default 16, 1..100000 ({@link DhchapLimits}). */
    public static final String DHCHAP_ADDRESS_UNITS_PER_SECOND = "rdmablock.node.dhchap.addressUnitsPerSecond";
    /** Budget an idle address accumulates, cost units; default 128, 1..1000000 ({@link DhchapLimits}). */
    public static final String DHCHAP_ADDRESS_BURST_UNITS = "rdmablock.node.dhchap.addressBurstUnits";
    /** Negotiates a queue may send before it authenticates; default 3, 1..100 ({@link DhchapLimits}). */
    public static final String DHCHAP_TRANSACTIONS_BEFORE_SUCCESS = "rdmablock.node.dhchap.transactionsBeforeSuccess";
    /** Least time between two re-authentications of a queue, ms; default 1000, 0..3600000 ({@link DhchapLimits}). */
    public static final String DHCHAP_REAUTH_INTERVAL_MS = "rdmablock.node.dhchap.reauthIntervalMs";

    // ---- replication --------------------------------------------------------------------------------------------

    /**
     * Longest wait for a forward queue's or peer link's set-up (CM connect, Fabrics Connect, enable) before the copy
     * is dropped, also the least set-up bound of a resync or verify channel (docs/replication.md). Ms, default
     * {@value #DEFAULT_REPLICA_OPEN_TIMEOUT_MS} (a loaded machine or an emulated guest needs more: the VM runner's
     * children use 120000), 1..3600000. Read by the replication (ReplicatedWrites, PeerLink, CopyChannel).
     */
    public static final String REPLICA_OPEN_TIMEOUT_MS = "rdmablock.replica.openTimeoutMs";
    /** Default {@link #REPLICA_OPEN_TIMEOUT_MS}. */
    public static final long DEFAULT_REPLICA_OPEN_TIMEOUT_MS = 10_000;
    /** Largest {@link #REPLICA_OPEN_TIMEOUT_MS}. */
    public static final long MAX_REPLICA_OPEN_TIMEOUT_MS = 3_600_000;

    // ---- background work ----------------------------------------------------------------------------------------

    /**
     * How far the foreground latency (mean of the primaries' commands) may rise above its idle baseline before the
     * node's background budget (resync, rebuild, verify) slows down, percent (docs/qos.md, "Background budget").
     * Default {@value io.rdmablock.node.qos.BackgroundBudget#DEFAULT_LATENCY_SLACK_PCT}, 1..10000. Read by the
     * {@link io.rdmablock.node.qos.BackgroundBudget} made at start.
     */
    public static final String BACKGROUND_LATENCY_SLACK_PCT = "rdmablock.node.background.latencySlackPct";

    // ---- volume store -------------------------------------------------------------------------------------------

    /**
     * The store's I/O backend: {@code auto} (io_uring when it works, else the thread pool), {@code io_uring},
     * {@code threadpool}; default auto ({@link StoreOptions#backend()}).
     */
    public static final String STORE_BACKEND = StoreOptions.BACKEND_PROPERTY;
    /** Worker threads of the thread-pool backend; default 32, 1..1024 ({@link StoreOptions#poolThreads()}). */
    public static final String STORE_POOL_THREADS = StoreOptions.POOL_THREADS_PROPERTY;
    /**
     * Direct-I/O alignment override, bytes: 0 = query the file ({@code statx} DIOALIGN, else 4096), or a power of two
     * 512..65536; default 0 ({@link StoreOptions#directIoAlignBytes()}).
     */
    public static final String STORE_DIRECT_IO_ALIGN_BYTES = StoreOptions.DIO_ALIGN_PROPERTY;
    /** {@code true} reserves each volume's space at create and grow (thick); {@code true | false}, default false. */
    public static final String STORE_PREALLOCATE = StoreOptions.PREALLOCATE_PROPERTY;
    /**
     * Layout of volumes created from now on: 0 = flat (no snapshots), else the cluster size in bytes of the
     * allocation map, a power of two 65536..16777216; default 1048576 ({@link StoreOptions#clusterBytes()}).
     */
    public static final String STORE_CLUSTER_BYTES = StoreOptions.CLUSTER_BYTES_PROPERTY;
    /**
     * Fault injection (tests, fault drills): {@code stall:<volumeId>:<offsetBytes>:<delayMs>[:<count>]}; default
     * none ({@link StoreFaults}). Installed on the store when the node opens it.
     */
    public static final String STORE_FAULTS = StoreFaults.PROPERTY;

    /** Every knob with its default: every property unset. */
    public static final NodeConfiguration DEFAULTS = new NodeConfiguration(TargetTuning.DEFAULTS,
            DEFAULT_REPLICA_OPEN_TIMEOUT_MS, StoreOptions.defaults(), null,
            io.rdmablock.node.qos.BackgroundBudget.DEFAULT_LATENCY_SLACK_PCT);

    public NodeConfiguration {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(storeOptions, "storeOptions");
        Knobs.check(REPLICA_OPEN_TIMEOUT_MS, replicaOpenTimeoutMs, 1, MAX_REPLICA_OPEN_TIMEOUT_MS);
        storeFaults = storeFaults == null || storeFaults.isBlank() ? null : storeFaults.trim();
        StoreFaults.parse(storeFaults); // checked now, a fresh rule (it counts) at each store open
        Knobs.check(BACKGROUND_LATENCY_SLACK_PCT, backgroundLatencySlackPct,
                io.rdmablock.node.qos.BackgroundBudget.MIN_LATENCY_SLACK_PCT,
                io.rdmablock.node.qos.BackgroundBudget.MAX_LATENCY_SLACK_PCT);
    }

    /**
     * The knobs from this JVM's system properties, each checked against its bounds.
     *
     * @throws IllegalArgumentException naming the property, its value and its bounds when one is invalid
     */
    public static NodeConfiguration fromSystemProperties() {
        return from(System::getProperty);
    }

    /**
     * The knobs from {@code properties} (a property's name to its value, null when unset), each checked.
     *
     * @throws IllegalArgumentException naming the property, its value and its bounds when one is invalid
     */
    public static NodeConfiguration from(Function<String, String> properties) {
        Knobs r = new Knobs(properties);
        ConnectLimits c = ConnectLimits.DEFAULTS;
        long maxKatoMs = r.number(MAX_KATO_MS, c.maxKatoMs(), 1_000, 86_400_000);
        ConnectLimits connect = new ConnectLimits(
                (int) r.number(MAX_CONTROLLERS, c.maxControllers(), 1, 1 << 20),
                (int) r.number(MAX_DISCOVERY_CONTROLLERS, c.maxDiscoveryControllers(), 1, 1 << 20),
                (int) r.number(MAX_CONTROLLERS_PER_HOST, c.maxControllersPerHost(), 1, 1 << 20),
                (int) r.number(MAX_QUEUES_PER_HOST, c.maxQueuesPerHost(), 1, 1 << 24),
                r.number(MAX_REGISTERED_BYTES, c.maxRegisteredBytes(), 1L << 20, 1L << 40),
                (int) r.number(DEFAULT_KATO_MS, c.defaultKatoMs(), 1_000, maxKatoMs), (int) maxKatoMs);
        DhchapLimits d = DhchapLimits.DEFAULTS;
        DhchapLimits dhchap = new DhchapLimits(
                (int) r.number(DHCHAP_THREADS, d.threads(), 1, 16),
                (int) r.number(DHCHAP_QUEUE_MAX, d.queueMax(), 1, 65_536),
                r.number(DHCHAP_ADDRESS_UNITS_PER_SECOND, d.addressUnitsPerSecond(), 1, 100_000),
                r.number(DHCHAP_ADDRESS_BURST_UNITS, d.addressBurstUnits(), 1, 1_000_000),
                (int) r.number(DHCHAP_TRANSACTIONS_BEFORE_SUCCESS, d.transactionsBeforeSuccess(), 1, 100),
                r.number(DHCHAP_REAUTH_INTERVAL_MS, d.reauthIntervalMs(), 0, 3_600_000));
        TargetTuning target = new TargetTuning(connect, dhchap,
                (int) r.number(STORE_WAIT_MIN, TargetTuning.DEFAULT_STORE_WAIT_MIN, 1, Integer.MAX_VALUE),
                r.number(EPOCH_WINDOW, TargetTuning.DEFAULT_EPOCH_WINDOW, 1, TargetTuning.MAX_EPOCH_WINDOW),
                r.bool(REGISTER_STORE_BUFFERS, true));
        long openTimeoutMs = r.number(REPLICA_OPEN_TIMEOUT_MS, DEFAULT_REPLICA_OPEN_TIMEOUT_MS, 1,
                MAX_REPLICA_OPEN_TIMEOUT_MS);
        StoreOptions s = StoreOptions.defaults();
        String backend = r.text(STORE_BACKEND);
        long align = r.number(STORE_DIRECT_IO_ALIGN_BYTES, s.directIoAlignBytes(), 0, 65_536);
        if (align != 0 && (Long.bitCount(align) != 1 || align < 512)) {
            throw new IllegalArgumentException("invalid " + STORE_DIRECT_IO_ALIGN_BYTES + ": value=" + align
                    + ", allowed=0 or a power of two 512-65536");
        }
        StoreOptions store = new StoreOptions(backend == null ? null : StoreOptions.parseBackend(backend),
                (int) r.number(STORE_POOL_THREADS, s.poolThreads(), 1, 1024), (int) align,
                r.bool(STORE_PREALLOCATE, s.preallocate()),
                (int) r.number(STORE_CLUSTER_BYTES, s.clusterBytes(), 0, StoreOptions.MAX_CLUSTER_BYTES));
        String faults = r.text(STORE_FAULTS);
        StoreFaults.parse(faults); // names the property on a bad rule
        int slack = (int) r.number(BACKGROUND_LATENCY_SLACK_PCT,
                io.rdmablock.node.qos.BackgroundBudget.DEFAULT_LATENCY_SLACK_PCT,
                io.rdmablock.node.qos.BackgroundBudget.MIN_LATENCY_SLACK_PCT,
                io.rdmablock.node.qos.BackgroundBudget.MAX_LATENCY_SLACK_PCT);
        return new NodeConfiguration(target, openTimeoutMs, store, faults, slack);
    }

    /** {@link #replicaOpenTimeoutMs()} in ns. */
    public long replicaOpenTimeoutNs() {
        return replicaOpenTimeoutMs * 1_000_000L;
    }

    /** A new fault-injection rule of {@link #STORE_FAULTS} (each counts its own matches), or null for none. */
    public StoreFaults storeFaultsRule() {
        return StoreFaults.parse(storeFaults);
    }

    /** The same with other target knobs (tests). */
    public NodeConfiguration withTarget(TargetTuning t) {
        return new NodeConfiguration(t, replicaOpenTimeoutMs, storeOptions, storeFaults, backgroundLatencySlackPct);
    }

    /** The same with another {@link #REPLICA_OPEN_TIMEOUT_MS} (tests). */
    public NodeConfiguration withReplicaOpenTimeoutMs(long ms) {
        return new NodeConfiguration(target, ms, storeOptions, storeFaults, backgroundLatencySlackPct);
    }

    /** The same with other store options (tests, {@code --store null}). */
    public NodeConfiguration withStoreOptions(StoreOptions o) {
        return new NodeConfiguration(target, replicaOpenTimeoutMs, o, storeFaults, backgroundLatencySlackPct);
    }
}
