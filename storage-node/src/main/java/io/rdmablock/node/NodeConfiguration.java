package io.rdmablock.node;

import io.rdmablock.node.store.StoreFaults;
import io.rdmablock.node.store.StoreOptions;
import io.rdmablock.node.target.ConnectLimits;
import io.rdmablock.node.target.DhchapLimits;
import io.rdmablock.node.target.TargetTuning;
import io.rdmablock.rdma.config.Knob;
import io.rdmablock.rdma.config.Knobs;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * The storage node's {@code -D} system-property knobs, in one place: each named here with its default, unit and
 * bounds (as a {@link Knob} descriptor, {@link #TARGET_KNOBS}, {@link #REPLICATION_KNOBS}, {@link #STORE_KNOBS}, from
 * which docs/configuration.md's tables are generated), read and checked once at start ({@link #fromSystemProperties()}: {@link NodeCommand} before anything
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

    // ---- the descriptors: name, default, bounds, unit, description; read through them, documented from them ----

    private static final ConnectLimits C = ConnectLimits.DEFAULTS;
    private static final DhchapLimits D = DhchapLimits.DEFAULTS;
    private static final StoreOptions S = StoreOptions.defaults();

    private static final Knob K_STORE_WAIT_MIN = Knob.number(STORE_WAIT_MIN, TargetTuning.DEFAULT_STORE_WAIT_MIN, 1,
            Integer.MAX_VALUE, "commands", "Outstanding commands, all at the store, from which an idle poller waits "
                    + "on the store at once instead of spinning first; above a queue's entries turns it off "
                    + "(docs/bench.md \"Node store wait\"). (`Poller`)");
    private static final Knob K_EPOCH_WINDOW = Knob.number(EPOCH_WINDOW, TargetTuning.DEFAULT_EPOCH_WINDOW, 1,
            TargetTuning.MAX_EPOCH_WINDOW, "epochs", "How far above the epoch the management plane last told the "
                    + "node a forwarded command may raise a secondary copy's epoch (docs/failover.md). (`Subsystem`)");
    private static final Knob K_REGISTER_STORE_BUFFERS = Knob.flag(REGISTER_STORE_BUFFERS, true, "`false` skips "
            + "registering each I/O queue's buffers with its store queue (io_uring fixed buffers): A/B measurements, "
            + "kernels that refuse them. (`LocalVolumeIo`, through `VolumeIo.Context`)");
    private static final Knob K_MAX_CONTROLLERS = Knob.number(MAX_CONTROLLERS, C.maxControllers(), 1, 1 << 20,
            "controllers", "Live controllers of volume subsystems on the node; beyond it a Connect is answered "
                    + "Connect Controller Busy (docs/wire-protocol.md 1.5). (`ConnectLimits`, `ControllerTable`)");
    private static final Knob K_MAX_DISCOVERY_CONTROLLERS = Knob.number(MAX_DISCOVERY_CONTROLLERS,
            C.maxDiscoveryControllers(), 1, 1 << 20, "controllers", "Live discovery controllers on the node, apart "
                    + "from the volume ones. (same)");
    private static final Knob K_MAX_CONTROLLERS_PER_HOST = Knob.number(MAX_CONTROLLERS_PER_HOST,
            C.maxControllersPerHost(), 1, 1 << 20, "controllers", "Live controllers of one host NQN on the node, "
                    + "any subsystem. (same)");
    private static final Knob K_MAX_QUEUES_PER_HOST = Knob.number(MAX_QUEUES_PER_HOST, C.maxQueuesPerHost(), 1,
            1 << 24, "queues", "Connected queues (admin and I/O) of one host NQN on the node. (same)");
    private static final Knob K_MAX_REGISTERED_BYTES = Knob.number(MAX_REGISTERED_BYTES, C.maxRegisteredBytes(),
            1L << 20, 1L << 40, "bytes", "Registered queue memory of the node; a Connect whose buffers would go "
                    + "beyond it is refused. (`Target`)")
            .withDefaultText(C.maxRegisteredBytes() + " (8 GiB)").withBoundsText("1048576..1099511627776 (1 MiB..1 TiB)");
    private static final Knob K_MAX_KATO_MS = Knob.number(MAX_KATO_MS, C.maxKatoMs(), 1_000, 86_400_000, "ms",
            "Largest KATO of any controller; larger asks are lowered to it. (`ConnectLimits`)");
    private static final Knob K_DEFAULT_KATO_MS = Knob.number(DEFAULT_KATO_MS, C.defaultKatoMs(), 1_000, 86_400_000,
            "ms", "KATO of a volume controller whose Connect asks for 0 (a discovery controller's is 120000). "
                    + "(`ConnectLimits`)").withBoundsText("1000..`maxKatoMs`");
    private static final Knob K_DHCHAP_THREADS = Knob.number(DHCHAP_THREADS, D.threads(), 1, 16, "threads",
            "DH-HMAC-CHAP worker threads (never a poller). (`DhchapWork`)");
    private static final Knob K_DHCHAP_QUEUE_MAX = Knob.number(DHCHAP_QUEUE_MAX, D.queueMax(), 1, 65_536,
            "computations", "DH computations waiting for a worker; beyond it a Receive waits. (`DhchapWork`)");
    private static final Knob K_DHCHAP_UNITS = Knob.number(DHCHAP_ADDRESS_UNITS_PER_SECOND,
            D.addressUnitsPerSecond(), 1, 100_000, "cost units/s", "DH work one peer IP address may have done "
                    + "(ffdhe2048 = 1 unit per exponentiation). (`DhchapWork`)");
    private static final Knob K_DHCHAP_BURST = Knob.number(DHCHAP_ADDRESS_BURST_UNITS, D.addressBurstUnits(), 1,
            1_000_000, "cost units", "Budget an idle address accumulates. (`DhchapWork`)");
    private static final Knob K_DHCHAP_TRANSACTIONS = Knob.number(DHCHAP_TRANSACTIONS_BEFORE_SUCCESS,
            D.transactionsBeforeSuccess(), 1, 100, "Negotiates", "Negotiates a queue may send before it "
                    + "authenticates; the next is answered Failure1. (`QueueAuthentication`)");
    private static final Knob K_DHCHAP_REAUTH = Knob.number(DHCHAP_REAUTH_INTERVAL_MS, D.reauthIntervalMs(), 0,
            3_600_000, "ms", "Least time between two Negotiates of an authenticated queue. (`QueueAuthentication`)");
    private static final Knob K_REPLICA_OPEN_TIMEOUT_MS = Knob.number(REPLICA_OPEN_TIMEOUT_MS,
            DEFAULT_REPLICA_OPEN_TIMEOUT_MS, 1, MAX_REPLICA_OPEN_TIMEOUT_MS, "ms", "Longest wait for a forward "
                    + "queue's or peer link's set-up (CM connect, Fabrics Connect, enable) before the copy is dropped; "
                    + "also the least set-up bound of a resync or verify channel. A loaded machine or an emulated "
                    + "guest needs more (the VM runner's children use 120000; docs/replication.md). (`Replication` "
                    + "-> `ReplicatedWrites`, `PeerLink`, `Activation`, `CopyChannel`)");
    private static final Knob K_BACKGROUND_LATENCY_SLACK_PCT = Knob.number(BACKGROUND_LATENCY_SLACK_PCT,
            io.rdmablock.node.qos.BackgroundBudget.DEFAULT_LATENCY_SLACK_PCT,
            io.rdmablock.node.qos.BackgroundBudget.MIN_LATENCY_SLACK_PCT,
            io.rdmablock.node.qos.BackgroundBudget.MAX_LATENCY_SLACK_PCT, "percent", "How far the foreground "
                    + "latency (mean of the primaries' commands, smoothed) may rise above its idle baseline before "
                    + "the node's background budget (resync, rebuild, verify between `--resync-min-mib-s` and "
                    + "`--resync-mib-s`) halves its rate (docs/qos.md \"Background budget\"). Set at start. "
                    + "(`StorageNode` -> `BackgroundBudget`)");
    private static final Knob K_STORE_BACKEND = Knob.text(STORE_BACKEND, "`auto`", "`auto`, `io_uring`, "
            + "`threadpool`", "I/O backend; `auto` takes io_uring when it works, else the thread pool (one log line "
            + "says which and why). (`VolumeStore` via `StoreOptions`)");
    private static final Knob K_STORE_POOL_THREADS = Knob.number(STORE_POOL_THREADS, S.poolThreads(), 1, 1024,
            "threads", "Worker threads of the thread-pool backend. (same)");
    private static final Knob K_STORE_DIO_ALIGN = Knob.number(STORE_DIRECT_IO_ALIGN_BYTES, S.directIoAlignBytes(),
            0, 65_536, "bytes", "0 queries the file's direct-I/O alignment (`statx` DIOALIGN, else 4096); a value "
                    + "overrides it. (same)").withBoundsText("0, or a power of two 512..65536");
    private static final Knob K_STORE_PREALLOCATE = Knob.flag(STORE_PREALLOCATE, S.preallocate(), "`true` reserves "
            + "every volume's space at create and grow (thick provisioning, `fallocate`). (same)");
    private static final Knob K_STORE_CLUSTER_BYTES = Knob.number(STORE_CLUSTER_BYTES, S.clusterBytes(), 0,
            StoreOptions.MAX_CLUSTER_BYTES, "bytes", "Layout of volumes created from now on: `0` = flat (no "
                    + "snapshots), else the allocation map's cluster size (docs/snapshots.md). A volume keeps its "
                    + "layout. (same)").withBoundsText("`0` or a power of two 65536..16777216");
    private static final Knob K_STORE_FAULTS = Knob.text(STORE_FAULTS, "none", "`stall:<volumeId>:<offsetBytes>:"
            + "<delayMs>[:<count>]`", "Fault injection for tests and fault drills: holds matching READ/WRITE "
            + "commands as a hung disk would (`StoreFaults`); not applied with `--store null`.");

    /** The fabric target's knobs, as docs/configuration.md lists them. */
    public static final List<Knob> TARGET_KNOBS = List.of(K_STORE_WAIT_MIN, K_EPOCH_WINDOW, K_REGISTER_STORE_BUFFERS,
            K_MAX_CONTROLLERS, K_MAX_DISCOVERY_CONTROLLERS, K_MAX_CONTROLLERS_PER_HOST, K_MAX_QUEUES_PER_HOST,
            K_MAX_REGISTERED_BYTES, K_DEFAULT_KATO_MS, K_MAX_KATO_MS, K_DHCHAP_THREADS, K_DHCHAP_QUEUE_MAX,
            K_DHCHAP_UNITS, K_DHCHAP_BURST, K_DHCHAP_TRANSACTIONS, K_DHCHAP_REAUTH);
    /** The replication's knobs, its background work's included. */
    public static final List<Knob> REPLICATION_KNOBS = List.of(K_REPLICA_OPEN_TIMEOUT_MS,
            K_BACKGROUND_LATENCY_SLACK_PCT);
    /** The volume store's knobs. */
    public static final List<Knob> STORE_KNOBS = List.of(K_STORE_BACKEND, K_STORE_POOL_THREADS, K_STORE_DIO_ALIGN,
            K_STORE_PREALLOCATE, K_STORE_CLUSTER_BYTES, K_STORE_FAULTS);

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
        long maxKatoMs = K_MAX_KATO_MS.number(r);
        ConnectLimits connect = new ConnectLimits((int) K_MAX_CONTROLLERS.number(r),
                (int) K_MAX_DISCOVERY_CONTROLLERS.number(r), (int) K_MAX_CONTROLLERS_PER_HOST.number(r),
                (int) K_MAX_QUEUES_PER_HOST.number(r), K_MAX_REGISTERED_BYTES.number(r),
                (int) K_DEFAULT_KATO_MS.number(r, maxKatoMs), (int) maxKatoMs);
        DhchapLimits dhchap = new DhchapLimits((int) K_DHCHAP_THREADS.number(r), (int) K_DHCHAP_QUEUE_MAX.number(r),
                K_DHCHAP_UNITS.number(r), K_DHCHAP_BURST.number(r), (int) K_DHCHAP_TRANSACTIONS.number(r),
                K_DHCHAP_REAUTH.number(r));
        TargetTuning target = new TargetTuning(connect, dhchap, (int) K_STORE_WAIT_MIN.number(r),
                K_EPOCH_WINDOW.number(r), K_REGISTER_STORE_BUFFERS.flag(r));
        long openTimeoutMs = K_REPLICA_OPEN_TIMEOUT_MS.number(r);
        String backend = K_STORE_BACKEND.text(r);
        long align = K_STORE_DIO_ALIGN.number(r);
        if (align != 0 && (Long.bitCount(align) != 1 || align < 512)) {
            throw new IllegalArgumentException("invalid " + STORE_DIRECT_IO_ALIGN_BYTES + ": value=" + align
                    + ", allowed=0 or a power of two 512-65536");
        }
        StoreOptions store = new StoreOptions(backend == null ? null : StoreOptions.parseBackend(backend),
                (int) K_STORE_POOL_THREADS.number(r), (int) align, K_STORE_PREALLOCATE.flag(r),
                (int) K_STORE_CLUSTER_BYTES.number(r));
        String faults = K_STORE_FAULTS.text(r);
        StoreFaults.parse(faults); // names the property on a bad rule
        int slack = (int) K_BACKGROUND_LATENCY_SLACK_PCT.number(r);
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
