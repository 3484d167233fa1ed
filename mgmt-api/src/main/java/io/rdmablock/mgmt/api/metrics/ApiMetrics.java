package io.rdmablock.mgmt.api.metrics;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.rdmablock.mgmt.client.BuildInfo;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.Volume;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * Prometheus metrics of the management server, in its own registry (so several servers can share a JVM in tests):
 * <ul>
 *   <li>{@code rdmablock_mgmt_requests_total{operation,status}} — answered requests; operation is the OpenAPI
 *       operationId, or {@code health}, {@code metrics}, {@code openapi}, {@code other};</li>
 *   <li>{@code rdmablock_mgmt_request_duration_seconds{operation}} — time to answer;</li>
 *   <li>{@code rdmablock_volumes{state}}, {@code rdmablock_nodes{state}} — read from the cluster at scrape time;</li>
 *   <li>{@code rdmablock_volume_copies{state}} — copies of volumes by copy state ({@code in_sync}, {@code stale},
 *       {@code syncing}; docs/replication.md; a volume being rebuilt may hold replicas + 1 copies);</li>
 *   <li>{@code rdmablock_resync_bytes_total} — bytes copied by resyncs since the server started, from the
 *       primaries' progress reports (docs/resync.md);</li>
 *   <li>{@code rdmablock_volume_verify_differing_regions{volume}} — regions that differed in the volume's last
 *       completed verify run (volumes without one are absent);</li>
 *   <li>{@code rdmablock_mgmt_leader} — 1 while this server leads the management cluster (a single server always
 *       does), 0 on a follower. A follower sees no heartbeats, so its node and volume states (every node
 *       {@code down}) are not the cluster's: dashboards and alerts keep only the leader's series of the cluster-state
 *       metrics ({@code and on(instance) rdmablock_mgmt_leader == 1}; ops/grafana/README.md);</li>
 *   <li>{@code rdmablock_node_state{node,state}}, {@code rdmablock_volume_state{volume,state}},
 *       {@code rdmablock_volume_copy_state{volume,node,role,state}} — 1 per node, volume and copy, labelled with its
 *       current state (the wire names of {@code NodeState}, {@code VolumeState}, {@code CopyRole},
 *       {@code CopyState}); read from the cluster at scrape time, so an alert can name what is down or stale;</li>
 *   <li>{@code rdmablock_volume_copy_resync_copied_bytes{volume,node}}, {@code
 *       rdmablock_volume_copy_resync_size_bytes{volume,node}} — for each {@code syncing} copy whose primary reported
 *       progress: bytes copied so far and bytes the resync copies (docs/resync.md, "Progress and metrics"); absent
 *       otherwise;</li>
 *   <li>{@code rdmablock_build_info{version,commit}} — always 1;</li>
 *   <li>the standard JVM metrics ({@code jvm_*}, {@code process_*}).</li>
 * </ul>
 */
public final class ApiMetrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final Counter requests;
    private final Histogram durations;

    /**
     * @param cluster the cluster whose state the gauges read at scrape time
     * @param leading true while this server leads the management cluster (a single server: always true)
     */
    public ApiMetrics(ClusterService cluster, BooleanSupplier leading) {
        Objects.requireNonNull(leading, "leading");
        requests = Counter.builder().name("rdmablock_mgmt_requests_total")
                .help("Management API requests answered").labelNames("operation", "status").register(registry);
        durations = Histogram.builder().name("rdmablock_mgmt_request_duration_seconds")
                .help("Management API answer time").labelNames("operation")
                .classicOnly().register(registry);
        GaugeWithCallback.builder().name("rdmablock_volumes").help("Volumes by state").labelNames("state")
                .callback(cb -> cluster.volumeCounts().forEach((s, n) -> cb.call(n, s.wireName())))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_nodes").help("Storage nodes by state").labelNames("state")
                .callback(cb -> cluster.nodeCounts().forEach((s, n) -> cb.call(n, s.wireName())))
                .register(registry);
        CounterWithCallback.builder().name("rdmablock_volume_promotions_total")
                .help("Promotions of a new primary (automatic and explicit) since the server started")
                .callback(cb -> cb.call(cluster.promotions())).register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_copies").help("Copies of volumes by state")
                .labelNames("state")
                .callback(cb -> copyCounts(cluster.listVolumes()).forEach((st, n) -> cb.call(n, st.wireName())))
                .register(registry);
        CounterWithCallback.builder().name("rdmablock_resync_bytes_total")
                .help("Bytes copied by resyncs since the server started, from the primaries' reports")
                .callback(cb -> cb.call(cluster.resyncBytes())).register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_verify_differing_regions")
                .help("Regions that differed between copies in the volume's last completed verify run")
                .labelNames("volume")
                .callback(cb -> cluster.verifyDifferingRegions().forEach((v, n) -> cb.call(n, v)))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_mgmt_leader")
                .help("1 while this management server leads (its cluster-state metrics are the cluster's), 0 on a "
                        + "follower").callback(cb -> cb.call(leading.getAsBoolean() ? 1 : 0)).register(registry);
        ClusterStateGauges.register(registry, cluster);
        BuildInfo build = BuildInfo.current();
        Info.builder().name("rdmablock_build_info").help("Build of the running management server")
                .labelNames("version", "commit").register(registry).setLabelValues(build.version(), build.commit());
        JvmMetrics.builder().register(registry);
    }

    /** Copies by copy state, over every copy of every volume (every state present, 0 when none). */
    static java.util.Map<CopyState, Long> copyCounts(java.util.List<Volume> volumes) {
        var counts = new java.util.EnumMap<CopyState, Long>(CopyState.class);
        for (CopyState s : CopyState.values()) {
            counts.put(s, 0L);
        }
        volumes.forEach(v -> v.copies().forEach(c -> counts.merge(c.state(), 1L, Long::sum)));
        return counts;
    }

    public void observe(String operation, int status, long elapsedNs) {
        requests.labelValues(operation, Integer.toString(status)).inc();
        durations.labelValues(operation).observe(elapsedNs / 1e9);
    }

    public String contentType() {
        return writer.getContentType();
    }

    /** @return the text exposition of every metric (call off the event loop: callbacks read the store) */
    public byte[] scrape() {
        var out = new ByteArrayOutputStream(16 * 1024);
        try {
            writer.write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
