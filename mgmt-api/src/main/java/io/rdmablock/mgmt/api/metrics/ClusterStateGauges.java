package io.rdmablock.mgmt.api.metrics;

import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.VolumeCopy;

import java.util.function.BiConsumer;

/**
 * The per-node, per-volume and per-copy state gauges of the management server ({@link ApiMetrics} lists them), so
 * an alert can name the node, volume or copy. One series per node, volume and copy (value 1, the state a label), and
 * for each {@code syncing} copy with reported progress its copied and total bytes; every callback reads the cluster
 * at scrape time (off the event loop).
 */
final class ClusterStateGauges {
    private ClusterStateGauges() {
    }

    static void register(PrometheusRegistry registry, ClusterService cluster) {
        GaugeWithCallback.builder().name("rdmablock_node_state")
                .help("1 for each registered storage node, labelled with its state (up, down, draining)")
                .labelNames("node", "state")
                .callback(cb -> cluster.nodes().listNodes().forEach(n -> cb.call(1, n.nodeId(), n.state().wireName())))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_state")
                .help("1 for each volume, labelled with its reported state (creating, ready, deleting, unavailable, "
                        + "degraded)").labelNames("volume", "state")
                .callback(cb -> cluster.listVolumes().forEach(v -> cb.call(1, v.name(), v.state().wireName())))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_copy_state")
                .help("1 for each copy of each volume, labelled with its node, role and copy state (in_sync, stale, "
                        + "syncing)").labelNames("volume", "node", "role", "state")
                .callback(cb -> cluster.listVolumes().forEach(v -> v.copies().forEach(c -> cb.call(1, v.name(),
                        c.nodeId(), c.role().wireName(), c.state().wireName()))))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_copy_resync_copied_bytes")
                .help("Bytes a syncing copy's resync has copied, as its primary last reported")
                .labelNames("volume", "node")
                .callback(cb -> syncing(cluster, (v, c) -> cb.call(c.syncedBytes(), v, c.nodeId())))
                .register(registry);
        GaugeWithCallback.builder().name("rdmablock_volume_copy_resync_size_bytes")
                .help("Bytes a syncing copy's resync copies in all (marked regions, or the volume size when full), as "
                        + "its primary last reported").labelNames("volume", "node")
                .callback(cb -> syncing(cluster, (v, c) -> cb.call(c.totalBytes(), v, c.nodeId())))
                .register(registry);
    }

    /** Calls {@code each} with the volume name and copy of every syncing copy whose primary reported progress. */
    private static void syncing(ClusterService cluster, BiConsumer<String, VolumeCopy> each) {
        cluster.listVolumes().forEach(v -> v.copies().forEach(c -> {
            if (c.state() == CopyState.SYNCING && c.syncedBytes() != null && c.totalBytes() != null) {
                each.accept(v.name(), c);
            }
        }));
    }
}
