package io.rdmablock.mgmt.api.metrics;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Live per-volume I/O rates for the dashboard, computed from the nodes' Prometheus text ({@code /metrics}): each
 * {@link #record} of one node's scrape takes the per-volume counters
 * {@code rdmablock_volume_commands_total}, {@code rdmablock_volume_bytes_total} and
 * {@code rdmablock_volume_command_duration_seconds_sum/_count} (opcodes {@code read} and {@code write}), and, against
 * the previous scrape of the same node, appends one {@link Sample} of rates per volume. Keeps the last
 * {@code capacity} samples per volume; a volume its node no longer reports is dropped. A counter that went down (the
 * node restarted) counts from zero. Time is passed in. Thread-safe (synchronized; called every few seconds).
 */
public final class VolumeStats {
    /**
     * Rates over one scrape interval.
     *
     * @param timeMs           end of the interval, epoch ms
     * @param readIops         READ commands per second
     * @param writeIops        WRITE commands per second
     * @param readBytesPerSec  payload bytes per second read by hosts
     * @param writeBytesPerSec payload bytes per second written by hosts
     * @param latencyUs        mean READ/WRITE latency inside the target over the interval, µs (0 without commands)
     */
    record Sample(long timeMs, double readIops, double writeIops, double readBytesPerSec, double writeBytesPerSec,
                  double latencyUs) {
    }

    /**
     * One volume's history: the node that reported it, the bytes written at least once (thin provisioning, as of
     * the last scrape; -1 unknown) and its samples, oldest first.
     */
    record Series(String volume, String nodeId, long usedBytes, List<Sample> samples) {
    }

    /** A node's usage as of its last scrape: bytes written in its volumes, and their sizes summed. */
    record NodeUsage(String nodeId, long usedBytes, long provisionedBytes) {
    }

    /** The answer of {@code GET /v1/stats/volumes}. */
    record Snapshot(long intervalMs, List<Series> volumes, List<NodeUsage> nodes) {
    }

    /** Counter values of one volume in one scrape (index: 0 read, 1 write). */
    static final class Counters {
        final double[] ops = new double[2];
        final double[] bytes = new double[2];
        double latencySumS;
        double latencyCount;
        long usedBytes = -1;
    }

    private record Scrape(long timeMs, Map<String, Counters> volumes) {
    }

    private static final String NODE_USED = "rdmablock_node_used_bytes";
    private static final String NODE_PROVISIONED = "rdmablock_node_provisioned_bytes";

    private final int capacity;
    private final long intervalMs;
    private final Map<String, Scrape> lastByNode = new HashMap<>();
    private final Map<String, ArrayDeque<Sample>> samples = new TreeMap<>();
    private final Map<String, String> nodeOf = new HashMap<>();
    private final Map<String, NodeUsage> nodeUsage = new TreeMap<>();

    public VolumeStats(int capacity, long intervalMs) {
        if (capacity < 1) {
            throw new IllegalArgumentException("invalid capacity: capacity=" + capacity + ", min=1");
        }
        this.capacity = capacity;
        this.intervalMs = intervalMs;
    }

    /** Takes one scrape of {@code nodeId}'s {@code /metrics} text made at {@code nowMs}. */
    synchronized void record(String nodeId, long nowMs, String metricsText) {
        Map<String, Counters> now = parse(metricsText);
        nodeUsage.put(nodeId, new NodeUsage(nodeId, (long) gauge(metricsText, NODE_USED),
                (long) gauge(metricsText, NODE_PROVISIONED)));
        Scrape prev = lastByNode.put(nodeId, new Scrape(nowMs, now));
        dropVolumesOf(nodeId, now);
        for (var e : now.entrySet()) {
            nodeOf.put(e.getKey(), nodeId);
            ArrayDeque<Sample> ring = samples.computeIfAbsent(e.getKey(), k -> new ArrayDeque<>());
            Counters before = prev == null ? null : prev.volumes().get(e.getKey());
            if (before == null || nowMs <= prev.timeMs()) {
                continue; // first sight: no interval yet
            }
            double dt = (nowMs - prev.timeMs()) / 1000.0;
            Counters c = e.getValue();
            double ops = delta(before.latencyCount, c.latencyCount);
            double latencyUs = ops > 0 ? delta(before.latencySumS, c.latencySumS) / ops * 1e6 : 0;
            ring.addLast(new Sample(nowMs, delta(before.ops[0], c.ops[0]) / dt, delta(before.ops[1], c.ops[1]) / dt,
                    delta(before.bytes[0], c.bytes[0]) / dt, delta(before.bytes[1], c.bytes[1]) / dt, latencyUs));
            while (ring.size() > capacity) {
                ring.removeFirst();
            }
        }
    }

    /** Forgets a node (it is down or gone) and the volumes it reported. */
    synchronized void forgetNode(String nodeId) {
        lastByNode.remove(nodeId);
        nodeUsage.remove(nodeId);
        dropVolumesOf(nodeId, Map.of());
    }

    private void dropVolumesOf(String nodeId, Map<String, Counters> keep) {
        var gone = new ArrayList<String>();
        nodeOf.forEach((v, node) -> {
            if (node.equals(nodeId) && !keep.containsKey(v)) {
                gone.add(v);
            }
        });
        for (String v : gone) {
            nodeOf.remove(v);
            samples.remove(v);
        }
    }

    /** @return every volume's series, ordered by volume name */
    public synchronized Snapshot snapshot() {
        var out = new ArrayList<Series>();
        samples.forEach((v, ring) -> {
            String node = nodeOf.get(v);
            Scrape last = lastByNode.get(node);
            Counters c = last == null ? null : last.volumes().get(v);
            out.add(new Series(v, node, c == null ? -1 : c.usedBytes, List.copyOf(ring)));
        });
        return new Snapshot(intervalMs, out, List.copyOf(nodeUsage.values()));
    }

    /** The value of the unlabelled gauge {@code name} in the text, or -1. */
    static double gauge(String text, String name) {
        int at = text.startsWith(name + " ") ? 0 : text.indexOf("\n" + name + " ");
        if (at < 0) {
            return -1;
        }
        int start = text.indexOf(' ', at + 1) + 1;
        int end = text.indexOf('\n', start);
        try {
            return Double.parseDouble(text.substring(start, end < 0 ? text.length() : end).trim().split("\\s+")[0]);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static double delta(double before, double after) {
        return after >= before ? after - before : after; // reset: the node restarted
    }

    /** Parses the per-volume READ/WRITE counters out of Prometheus text format 0.0.4. */
    static Map<String, Counters> parse(String text) {
        var out = new HashMap<String, Counters>();
        int pos = 0;
        int n = text.length();
        while (pos < n) {
            int end = text.indexOf('\n', pos);
            if (end < 0) {
                end = n;
            }
            if (text.startsWith("rdmablock_volume_", pos)) {
                line(text.substring(pos, end), out);
            }
            pos = end + 1;
        }
        return out;
    }

    private static void line(String line, Map<String, Counters> out) {
        int brace = line.indexOf('{');
        int close = line.lastIndexOf('}');
        if (brace < 0 || close < brace) {
            return;
        }
        String name = line.substring(0, brace);
        int kind = switch (name) {
            case "rdmablock_volume_commands_total" -> 0;
            case "rdmablock_volume_bytes_total" -> 1;
            case "rdmablock_volume_command_duration_seconds_sum" -> 2;
            case "rdmablock_volume_command_duration_seconds_count" -> 3;
            case "rdmablock_volume_used_bytes" -> 4;
            default -> -1;
        };
        if (kind < 0) {
            return;
        }
        Map<String, String> labels = labels(line.substring(brace + 1, close));
        String volume = labels.get("volume");
        String opcode = labels.get("opcode");
        int op = "read".equals(opcode) ? 0 : "write".equals(opcode) ? 1 : -1;
        if (volume == null || (op < 0 && kind != 4)) {
            return;
        }
        String[] rest = line.substring(close + 1).trim().split("\\s+");
        double value;
        try {
            value = Double.parseDouble(rest[0]);
        } catch (NumberFormatException e) {
            return;
        }
        Counters c = out.computeIfAbsent(volume, k -> new Counters());
        switch (kind) {
            case 4 -> c.usedBytes = (long) value;
            case 0 -> c.ops[op] = value;
            case 1 -> c.bytes[op] = value;
            case 2 -> c.latencySumS += value;
            default -> c.latencyCount += value;
        }
    }

    /** {@code a="x",b="y\"z"} → map; escapes {@code \\ \" \n} as in the text format. */
    private static Map<String, String> labels(String s) {
        var out = new HashMap<String, String>();
        int i = 0;
        while (i < s.length()) {
            int eq = s.indexOf('=', i);
            if (eq < 0 || eq + 1 >= s.length() || s.charAt(eq + 1) != '"') {
                break;
            }
            String key = s.substring(i, eq).trim();
            var value = new StringBuilder();
            int j = eq + 2;
            while (j < s.length() && s.charAt(j) != '"') {
                char ch = s.charAt(j);
                if (ch == '\\' && j + 1 < s.length()) {
                    char next = s.charAt(++j);
                    value.append(next == 'n' ? '\n' : next);
                } else {
                    value.append(ch);
                }
                j++;
            }
            out.put(key, value.toString());
            i = j + 1;
            while (i < s.length() && (s.charAt(i) == ',' || s.charAt(i) == ' ')) {
                i++;
            }
        }
        return out;
    }
}
