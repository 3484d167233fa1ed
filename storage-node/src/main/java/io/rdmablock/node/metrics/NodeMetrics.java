package io.rdmablock.node.metrics;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.rdmablock.mgmt.client.BuildInfo;
import io.rdmablock.rdma.fabric.NvmeStatus;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The target's metrics, in a registry of their own (several nodes can live in one JVM in tests).
 *
 * <pre>
 * rdmablock_target_commands_total{opcode}            commands completed (any status)
 * rdmablock_target_bytes_total{opcode}               payload bytes moved by successful READ/WRITE (host view)
 * rdmablock_target_command_duration_seconds{opcode}  capsule received -> response posted (classic histogram)
 * rdmablock_target_errors_total{opcode,status}       commands completed with a non-zero NVMe status
 * rdmablock_target_outstanding_commands              commands received and not yet completed (queue depth)
 * rdmablock_target_queues                            connected queue pairs
 * rdmablock_target_controllers                       live controllers (host associations)
 * rdmablock_target_queue_teardowns_total{reason}     queues torn down (disconnect, transport error, malformed, ...)
 * rdmablock_target_pending_evictions_total{limit}    pending queues evicted for newer ones ({@link #pendingEvicted})
 * rdmablock_target_connect_refusals_total{cap}       Fabrics Connects answered Controller Busy ({@link #connectRefused})
 * rdmablock_volume_commands_total{volume,opcode}     the same three per volume ({@link VolumeMetrics})
 * rdmablock_volume_bytes_total{volume,opcode}
 * rdmablock_volume_command_duration_seconds{volume,opcode}
 * rdmablock_node_capacity_bytes, rdmablock_node_free_bytes, rdmablock_node_used_bytes, rdmablock_node_provisioned_bytes
 * rdmablock_volume_size_bytes{volume}, rdmablock_volume_used_bytes{volume}   read at scrape time ({@link #capacity})
 * rdmablock_volume_qos_delayed_seconds_total{volume} time commands waited for the volume's QoS budget ({@link #qos})
 * rdmablock_volume_qos_held_commands{volume}         commands waiting for the volume's QoS budget now
 * rdmablock_node_resync_bytes_total                  bytes copied by this node's resyncs ({@link #resyncBytes})
 * rdmablock_node_background_rate_bytes_per_second    the background budget's rate now ({@link #background})
 * rdmablock_node_background_granted_bytes_total      bytes the budget granted to resync, rebuild and verify
 * rdmablock_node_background_baseline_latency_seconds the foreground latency the budget compares against
 * rdmablock_node_foreground_latency_seconds          the smoothed foreground latency of its last window
 * rdmablock_soft_accept_errors_total                 failed accept() calls of soft-provider listeners (EMFILE, ...)
 * rdmablock_build_info{version,commit}               always 1
 * jvm_*, process_*                                   the standard JVM and process metrics
 * </pre>
 *
 * <p>Opcodes are folded into {@link #OP_NAMES}; the per-opcode data points are resolved in the constructor, and the
 * per-volume ones once per queue ({@link #volume}), so {@link #complete} does no map lookup and no allocation on
 * success (errors resolve their status label once). Latency is whatever the caller measured: read the clock at
 * completion, not the poll cycle's time, or commands answered within one cycle (admin) record zero.
 */
public final class NodeMetrics {
    public static final int OP_READ = 0;
    public static final int OP_WRITE = 1;
    public static final int OP_FLUSH = 2;
    public static final int OP_WRITE_ZEROES = 3;
    public static final int OP_DSM = 4;
    public static final int OP_ADMIN = 5;
    public static final int OP_FABRICS = 6;
    public static final int OP_OTHER = 7;
    static final String[] OP_NAMES = {"read", "write", "flush", "write_zeroes", "dsm", "admin", "fabrics", "other"};

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final java.util.concurrent.atomic.LongAdder resyncBytes = new java.util.concurrent.atomic.LongAdder();
    private final ForegroundLatency foregroundLatency = new ForegroundLatency();
    private final Counter errors;
    private final Counter teardowns;
    private final Counter pendingEvictions;
    private final Counter connectRefusals;
    private final Gauge outstanding;
    private final Gauge queues;
    private final Gauge controllers;
    private final CounterDataPoint[] ops = new CounterDataPoint[OP_NAMES.length];
    private final CounterDataPoint[] bytes = new CounterDataPoint[OP_NAMES.length];
    private final DistributionDataPoint[] latency = new DistributionDataPoint[OP_NAMES.length];
    private final ConcurrentHashMap<Long, CounterDataPoint> errorPoints = new ConcurrentHashMap<>();
    private final Counter volumeOps;
    private final Counter volumeBytes;
    private final Histogram volumeLatency;
    private final ConcurrentHashMap<String, VolumeMetrics> volumes = new ConcurrentHashMap<>();

    public NodeMetrics() {
        io.prometheus.metrics.core.metrics.CounterWithCallback.builder().name("rdmablock_node_resync_bytes_total")
                .help("Bytes copied by this node's resyncs").callback(cb -> cb.call(resyncBytes.sum()))
                .register(registry);
        io.prometheus.metrics.core.metrics.CounterWithCallback.builder().name("rdmablock_soft_accept_errors_total")
                .help("Failed accept() calls of soft-provider listeners (each paused accepting 10 ms to 1 s)")
                .callback(cb -> cb.call(io.rdmablock.rdma.verbs.soft.SoftVerbsProvider.acceptErrorsTotal()))
                .register(registry);
        Counter opsCounter = Counter.builder().name("rdmablock_target_commands_total")
                .help("Commands completed by the target, by opcode").labelNames("opcode").withoutExemplars()
                .register(registry);
        Counter bytesCounter = Counter.builder().name("rdmablock_target_bytes_total")
                .help("Payload bytes moved by successful commands, by opcode").labelNames("opcode")
                .withoutExemplars().register(registry);
        Histogram hist = Histogram.builder().name("rdmablock_target_command_duration_seconds")
                .help("Command latency inside the target: capsule received to response posted").labelNames("opcode")
                .classicOnly().classicExponentialUpperBounds(4e-6, 2, 20).withoutExemplars().register(registry);
        errors = Counter.builder().name("rdmablock_target_errors_total")
                .help("Commands completed with a non-zero NVMe status").labelNames("opcode", "status")
                .withoutExemplars().register(registry);
        teardowns = Counter.builder().name("rdmablock_target_queue_teardowns_total")
                .help("Queue pairs torn down, by reason").labelNames("reason").withoutExemplars().register(registry);
        pendingEvictions = Counter.builder().name("rdmablock_target_pending_evictions_total")
                .help("Pending queues (no Fabrics Connect yet) torn down to admit a newer connect request, by the "
                        + "limit reached (maxPendingQueuesPerAddress: the oldest of the same address; "
                        + "maxPendingQueues: the oldest of the address holding the most)").labelNames("limit")
                .withoutExemplars().register(registry);
        connectRefusals = Counter.builder().name("rdmablock_target_connect_refusals_total")
                .help("Fabrics Connects answered Controller Busy, by the cap reached (maxControllers, "
                        + "maxDiscoveryControllers, maxControllersPerHost, maxQueuesPerHost, maxRegisteredBytes) or "
                        + "noFreeCntlid").labelNames("cap").withoutExemplars().register(registry);
        outstanding = Gauge.builder().name("rdmablock_target_outstanding_commands")
                .help("Commands received and not yet completed (queue depth summed over queues)").register(registry);
        queues = Gauge.builder().name("rdmablock_target_queues").help("Connected queue pairs").register(registry);
        controllers = Gauge.builder().name("rdmablock_target_controllers").help("Live controllers")
                .register(registry);
        for (int i = 0; i < OP_NAMES.length; i++) {
            ops[i] = opsCounter.labelValues(OP_NAMES[i]);
            bytes[i] = bytesCounter.labelValues(OP_NAMES[i]);
            latency[i] = hist.labelValues(OP_NAMES[i]);
        }
        volumeOps = Counter.builder().name("rdmablock_volume_commands_total")
                .help("Commands completed by the target, by volume and opcode").labelNames("volume", "opcode")
                .withoutExemplars().register(registry);
        volumeBytes = Counter.builder().name("rdmablock_volume_bytes_total")
                .help("Payload bytes moved by successful commands, by volume and opcode")
                .labelNames("volume", "opcode").withoutExemplars().register(registry);
        volumeLatency = Histogram.builder().name("rdmablock_volume_command_duration_seconds")
                .help("Command latency inside the target, by volume and opcode").labelNames("volume", "opcode")
                .classicOnly().classicExponentialUpperBounds(4e-6, 2, 20).withoutExemplars().register(registry);
        BuildInfo build = BuildInfo.current();
        Info.builder().name("rdmablock_build_info").help("Build of the running storage node")
                .labelNames("version", "commit").register(registry).setLabelValues(build.version(), build.commit());
        JvmMetrics.builder().register(registry);
    }

    /**
     * The per-volume data points of {@code volume} (its name), created on first use; call once per queue or
     * controller, never per I/O (this is the label lookup).
     */
    public VolumeMetrics volume(String volume) {
        return volumes.computeIfAbsent(volume, name -> {
            var o = new CounterDataPoint[OP_NAMES.length];
            var b = new CounterDataPoint[OP_NAMES.length];
            var l = new DistributionDataPoint[OP_NAMES.length];
            for (int i = 0; i < OP_NAMES.length; i++) {
                o[i] = volumeOps.labelValues(name, OP_NAMES[i]);
                b[i] = volumeBytes.labelValues(name, OP_NAMES[i]);
                l[i] = volumeLatency.labelValues(name, OP_NAMES[i]);
            }
            return new VolumeMetrics(name, o, b, l);
        });
    }

    /** Drops the series of a deleted volume (queues that still hold its {@link VolumeMetrics} record nowhere). */
    public void removeVolume(String volume) {
        if (volumes.remove(volume) == null) {
            return;
        }
        for (String op : OP_NAMES) {
            volumeOps.remove(volume, op);
            volumeBytes.remove(volume, op);
            volumeLatency.remove(volume, op);
        }
    }

    /** Bytes copied by this node's resyncs (added by the copiers; read at scrape time). */
    public java.util.concurrent.atomic.LongAdder resyncBytes() {
        return resyncBytes;
    }

    /** The node's foreground latency signal (added to by the primaries' queues; read by the background budget). */
    public ForegroundLatency foregroundLatency() {
        return foregroundLatency;
    }

    /** Registers the background budget's metrics (docs/qos.md, "Background budget"); read at scrape time. Call once. */
    public void background(BackgroundSource source) {
        GaugeWithCallback.builder().name("rdmablock_node_background_rate_bytes_per_second")
                .help("Rate the node's background work (resync, rebuild, verify) may take now, bytes/s")
                .callback(cb -> cb.call(source.rateBytesPerSecond())).register(registry);
        io.prometheus.metrics.core.metrics.CounterWithCallback.builder()
                .name("rdmablock_node_background_granted_bytes_total")
                .help("Bytes the background budget granted to resync, rebuild and verify")
                .callback(cb -> cb.call(source.grantedBytes())).register(registry);
        GaugeWithCallback.builder().name("rdmablock_node_background_baseline_latency_seconds")
                .help("Idle baseline of the foreground latency the background budget compares against (0: none yet)")
                .callback(cb -> cb.call(source.baselineNs() / 1e9)).register(registry);
        GaugeWithCallback.builder().name("rdmablock_node_foreground_latency_seconds")
                .help("Mean latency of foreground commands (primaries' volume I/O), smoothed over the budget's windows")
                .callback(cb -> cb.call(source.signalNs() / 1e9)).register(registry);
    }

    /** Registers the capacity gauges; their callbacks run at scrape time. Call once. */
    public void capacity(CapacitySource source) {
        GaugeWithCallback.builder().name("rdmablock_node_capacity_bytes").help("Capacity offered for volumes")
                .callback(cb -> cb.call(source.capacityBytes())).register(registry);
        GaugeWithCallback.builder().name("rdmablock_node_free_bytes")
                .help("Capacity a new volume may still be promised").callback(cb -> cb.call(source.freeBytes()))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_node_used_bytes")
                .help("Bytes written at least once, summed over the volumes (thin provisioning)")
                .callback(cb -> cb.call(source.volumes().stream().mapToLong(CapacitySource.VolumeUsage::usedBytes)
                        .sum())).register(registry);
        GaugeWithCallback.builder().name("rdmablock_node_provisioned_bytes")
                .help("Sizes of the volumes held, summed")
                .callback(cb -> cb.call(source.volumes().stream().mapToLong(CapacitySource.VolumeUsage::sizeBytes)
                        .sum())).register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_size_bytes").help("Volume size").labelNames("volume")
                .callback(cb -> source.volumes().forEach(v -> cb.call(v.sizeBytes(), v.volume())))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_used_bytes")
                .help("Bytes of the volume written at least once (thin provisioning)").labelNames("volume")
                .callback(cb -> source.volumes().forEach(v -> cb.call(v.usedBytes(), v.volume())))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_snapshots").help("Snapshots the volume holds on this node")
                .labelNames("volume").callback(cb -> source.volumes().forEach(v -> cb.call(v.snapshots(), v.volume())))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_snapshot_exclusive_bytes")
                .help("Bytes the volume's snapshots hold alone (freed by deleting them)").labelNames("volume")
                .callback(cb -> source.volumes().forEach(v -> cb.call(v.snapshotExclusiveBytes(), v.volume())))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_snapshot_barrier_seconds")
                .help("How long the last snapshot taken on this node held its volume's writes")
                .callback(cb -> cb.call(source.lastSnapshotBarrierNs() / 1e9)).register(registry);
    }

    /**
     * Registers the QoS metrics of the volumes (docs/qos.md); their callbacks run at scrape time. Call once.
     * {@code rdmablock_volume_qos_delayed_seconds_total{volume}} (counter) and
     * {@code rdmablock_volume_qos_held_commands{volume}} (gauge).
     */
    public void qos(QosSource source) {
        io.prometheus.metrics.core.metrics.CounterWithCallback.builder()
                .name("rdmablock_volume_qos_delayed_seconds_total")
                .help("Time commands of the volume waited for its QoS budget (limits on the primary), seconds")
                .labelNames("volume")
                .callback(cb -> source.volumes().forEach(v -> cb.call(v.delayedSeconds(), v.volume())))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_qos_held_commands")
                .help("Commands of the volume held for its QoS budget now (they wait, they are not failed)")
                .labelNames("volume")
                .callback(cb -> source.volumes().forEach(v -> cb.call(v.heldCommands(), v.volume())))
                .register(registry);
    }

    /** The registry holding every metric of this node. */
    public PrometheusRegistry registry() {
        return registry;
    }

    /** A command was received. */
    public void started() {
        outstanding.inc();
    }

    /** A command completed with {@code status} after {@code latencyNs}, moving {@code payloadBytes}. */
    public void complete(int op, long payloadBytes, long latencyNs, int status) {
        complete(null, op, payloadBytes, latencyNs, status);
    }

    /**
     * A command of a queue on {@code volume} ({@code null}: not connected to one yet) completed with {@code status}
     * after {@code latencyNs}, moving {@code payloadBytes}.
     */
    public void complete(VolumeMetrics volume, int op, long payloadBytes, long latencyNs, int status) {
        outstanding.dec();
        ops[op].inc();
        double seconds = latencyNs / 1e9;
        latency[op].observe(seconds);
        if (volume != null) {
            volume.complete(op, payloadBytes, seconds, status);
        }
        if (status == 0) {
            if (payloadBytes > 0) {
                bytes[op].inc(payloadBytes);
            }
        } else {
            long key = ((long) op << 32) | status;
            errorPoints.computeIfAbsent(key, k -> errors.labelValues(OP_NAMES[op],
                    String.format("sct%d_sc0x%02x", NvmeStatus.sct(status), NvmeStatus.sc(status)))).inc();
        }
    }

    /** A received command was dropped without a response (its queue was torn down). */
    public void dropped() {
        outstanding.dec();
    }

    /**
     * A pending queue was evicted to admit a newer connect request: {@code limit} is the pending limit reached
     * ({@code maxPendingQueuesPerAddress} or {@code maxPendingQueues}).
     */
    public void pendingEvicted(String limit) {
        pendingEvictions.labelValues(limit).inc();
    }

    /** Pending queues evicted so far at {@code limit} ({@link #pendingEvicted}), for tests. */
    public long pendingEvictions(String limit) {
        return pendingEvictions.labelValues(limit).getLongValue();
    }

    /**
     * A Fabrics Connect was answered Controller Busy: {@code cap} is the {@code rdmablock.node.*} cap reached (its
     * short name) or {@code noFreeCntlid}.
     */
    public void connectRefused(String cap) {
        connectRefusals.labelValues(cap).inc();
    }

    public void queueUp() {
        queues.inc();
    }

    public void queueDown(String reason) {
        queues.dec();
        teardowns.labelValues(reason).inc();
    }

    /** Queues torn down so far for {@code reason} ({@link #queueDown}), for tests. */
    public long queueTeardowns(String reason) {
        return teardowns.labelValues(reason).getLongValue();
    }

    public void controllerUp() {
        controllers.inc();
    }

    public void controllerDown() {
        controllers.dec();
    }

    /** Fabrics Connects answered Controller Busy for {@code cap} so far ({@link #connectRefused}), for tests. */
    public long connectRefusals(String cap) {
        return connectRefusals.labelValues(cap).getLongValue();
    }

    /** Current value of a counter data point, for tests: commands completed for {@code op}. */
    public long commandsCompleted(int op) {
        return ops[op].getLongValue();
    }

    /**
     * Starts the {@code /metrics} HTTP endpoint: {@code GET} (and {@code HEAD}) {@code /metrics} only; another method on
     * it answers 405 with {@code Allow: GET, HEAD}, every other path 404.
     *
     * @throws UncheckedIOException when the address cannot be bound
     */
    public HTTPServer serve(InetSocketAddress listen) {
        try {
            return HTTPServer.builder().inetAddress(listen.getAddress()).port(listen.getPort()).registry(registry)
                    .registerHealthHandler(false).defaultHandler(NodeMetrics::notFound)
                    .authenticator(METHOD_FILTER).buildAndStart();
        } catch (IOException e) {
            throw new UncheckedIOException("metrics endpoint bind failed: listen=" + listen, e);
        }
    }

    /**
     * The exporter has no per-method routing; its authenticator hook runs before every handler, so it refuses here:
     * a method other than GET/HEAD on {@code /metrics} 405, a path below {@code /metrics} (which the JDK server's
     * prefix match would give the metrics handler) 404. Everything else passes on.
     */
    private static final com.sun.net.httpserver.Authenticator METHOD_FILTER = new com.sun.net.httpserver.Authenticator() {
        private final Success pass = new Success(new com.sun.net.httpserver.HttpPrincipal("scraper", "metrics"));

        @Override
        public Result authenticate(com.sun.net.httpserver.HttpExchange exchange) {
            String path = exchange.getRequestURI().getRawPath();
            String method = exchange.getRequestMethod();
            if ("/metrics".equals(path)) {
                if ("GET".equals(method) || "HEAD".equals(method)) {
                    return pass;
                }
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                return new Failure(405);
            }
            return path != null && path.startsWith("/metrics") ? new Failure(404) : pass;
        }
    };

    /** Anything but {@code /metrics}: 404 (the exporter's default would serve the metrics on every path). */
    private static void notFound(com.sun.net.httpserver.HttpExchange exchange) throws IOException {
        byte[] body = ("no route " + exchange.getRequestMethod() + " " + exchange.getRequestURI().getRawPath()
                + " (this endpoint serves GET /metrics)\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(404, body.length);
        try (var out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
