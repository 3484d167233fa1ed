package io.rdmablock.cli;

import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Leader;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeState;
import picocli.CommandLine.Command;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code rdmablock status}: the cluster on one screen, like {@code ceph -s}: the overall health and why, the
 * management leader and the server that answered, whether that server reads its metadata store (etcd or local), the
 * nodes by state (naming those not up), the volumes by state, the copies not in sync and the resyncs running with
 * their progress. Read-only: three GETs ({@code /v1/leader}, {@code /v1/nodes}, {@code /v1/volumes}); the read-only
 * token suffices.
 *
 * <p>Degraded ({@link ExitCodes#DEGRADED}) when any of: no leader is known, the answering server cannot read its
 * metadata store, a node is down, a volume is {@code degraded} or {@code unavailable}, a copy is not {@code in_sync}.
 * A draining node, or a volume being created or deleted, is shown but is not degraded. Sizes are bytes (JSON) or
 * binary units (table); {@code etaSeconds} is seconds.
 *
 * <p>Errors: the management server unreachable is exit {@link ExitCodes#UNAVAILABLE} with one line naming the URL;
 * an error answer is exit {@link ExitCodes#FAILED} (as every command, {@link RdmablockCli}).
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show the cluster on one screen: health, management leader, metadata store, nodes, volumes, "
                + "copies not in sync and resyncs running.",
        footer = {"", "Exit codes: 0 healthy; 4 degraded (no leader known, metadata store unreachable, a node down, "
                + "a volume degraded or unavailable, or a copy not in sync); 3 management server unreachable; "
                + "1 an error answer; 2 bad input.",
                "-o json prints one object: health, problems, answeredBy, leader, nodes, volumes, copiesNotInSync, "
                        + "resyncs, exitCode."})
final class StatusCommand extends MgmtCall {
    /** Overall health when nothing is wrong. */
    static final String HEALTH_OK = "HEALTH_OK";
    /** Overall health when something is (see the class documentation). */
    static final String HEALTH_DEGRADED = "HEALTH_DEGRADED";

    @Override
    public Integer call() {
        MgmtClient client = client();
        Leader leader = leaderOrNull(client);
        String answeredBy = client.baseUri().toString();
        List<Node> nodes = client.listNodes();
        List<Volume> volumes = client.listVolumes();
        Map<String, Object> status = summarize(answeredBy, leader, nodes, volumes);
        int code = HEALTH_OK.equals(status.get("health")) ? ExitCodes.OK : ExitCodes.DEGRADED;
        status.put("exitCode", code);
        PrintWriter out = out();
        if (output.json()) {
            out.println(Json.pretty(status));
        } else {
            printTable(out, status, leader, nodes, volumes);
        }
        out.flush();
        return code;
    }

    /** @return {@code GET /v1/leader}, or null when the server has no such route (404: a server before HA) */
    private static Leader leaderOrNull(MgmtClient client) {
        try {
            return client.leader();
        } catch (MgmtException e) {
            if (e.problem().status() == 404) {
                return null;
            }
            throw e;
        }
    }

    /**
     * @param answeredBy the management URL that answered
     * @param leader     {@code GET /v1/leader}'s answer, null when the server has none
     * @return the status as one JSON-ready object (insertion-ordered): health, problems, answeredBy, leader, nodes,
     *         volumes, copiesNotInSync, resyncs
     */
    static Map<String, Object> summarize(String answeredBy, Leader leader, List<Node> nodes, List<Volume> volumes) {
        List<String> problems = new ArrayList<>();
        if (leader != null && leader.leader() == null) {
            problems.add("no management leader known (an election in progress, or etcd unreachable)");
        }
        if (leader != null && leader.metadataStore() != null && !leader.metadataStore().reachable()) {
            problems.add("metadata store (" + leader.metadataStore().kind() + ") unreachable from " + leader.self()
                    + ": " + leader.metadataStore().detail());
        }
        var nodeCounts = new LinkedHashMap<String, Long>();
        for (NodeState s : NodeState.values()) {
            nodeCounts.put(s.wireName(), 0L);
        }
        var notUp = new ArrayList<Map<String, Object>>();
        var down = new ArrayList<String>();
        for (Node n : nodes) {
            nodeCounts.merge(n.state().wireName(), 1L, Long::sum);
            if (n.state() != NodeState.UP) {
                notUp.add(ordered("node", n.nodeId(), "state", n.state().wireName(), "lastHeartbeat",
                        n.lastHeartbeat()));
            }
            if (n.state() == NodeState.DOWN) {
                down.add(n.nodeId());
            }
        }
        if (!down.isEmpty()) {
            problems.add(down.size() + " node(s) down: " + String.join(", ", down));
        }
        var volumeCounts = new LinkedHashMap<String, Long>();
        for (VolumeState s : VolumeState.values()) {
            volumeCounts.put(s.wireName(), 0L);
        }
        var notServing = new ArrayList<String>();
        var copies = new ArrayList<Map<String, Object>>();
        var resyncs = new ArrayList<Map<String, Object>>();
        for (Volume v : volumes) {
            volumeCounts.merge(v.state().wireName(), 1L, Long::sum);
            if (v.state() == VolumeState.DEGRADED || v.state() == VolumeState.UNAVAILABLE) {
                notServing.add(v.name() + " (" + v.state().wireName() + ")");
            }
            for (VolumeCopy c : v.copies()) {
                if (c.state() == CopyState.IN_SYNC) {
                    continue;
                }
                copies.add(ordered("volume", v.name(), "node", c.nodeId(), "role", c.role().wireName(),
                        "state", c.state().wireName()));
                if (c.state() == CopyState.SYNCING) {
                    resyncs.add(ordered("volume", v.name(), "node", c.nodeId(), "syncedBytes", c.syncedBytes(),
                            "totalBytes", c.totalBytes(), "etaSeconds", c.etaSeconds()));
                }
            }
        }
        if (!notServing.isEmpty()) {
            problems.add(notServing.size() + " volume(s) not ready: " + String.join(", ", notServing));
        }
        if (!copies.isEmpty()) {
            problems.add(copies.size() + " copy(ies) not in sync, " + resyncs.size() + " resync(s) running");
        }
        var status = new LinkedHashMap<String, Object>();
        status.put("health", problems.isEmpty() ? HEALTH_OK : HEALTH_DEGRADED);
        status.put("problems", problems);
        status.put("answeredBy", answeredBy);
        status.put("leader", leader);
        status.put("nodes", ordered("total", (long) nodes.size(), "byState", nodeCounts, "notUp", notUp));
        status.put("volumes", ordered("total", (long) volumes.size(), "byState", volumeCounts));
        status.put("copiesNotInSync", copies);
        status.put("resyncs", resyncs);
        return status;
    }

    @SuppressWarnings("unchecked")
    private static void printTable(PrintWriter out, Map<String, Object> status, Leader leader, List<Node> nodes,
                                   List<Volume> volumes) {
        var top = new Table("FIELD", "VALUE");
        top.row("health", status.get("health"));
        for (String p : (List<String>) status.get("problems")) {
            top.row("", p);
        }
        top.row("leader", leaderLine(leader, (String) status.get("answeredBy")));
        top.row("metadata", storeLine(leader));
        var nodeSection = (Map<String, Object>) status.get("nodes");
        var notUp = (List<Map<String, Object>>) nodeSection.get("notUp");
        top.row("nodes", counts(nodes.size(), (Map<String, Long>) nodeSection.get("byState")));
        if (!notUp.isEmpty()) {
            var names = new ArrayList<String>();
            notUp.forEach(n -> names.add(n.get("node") + " (" + n.get("state") + ")"));
            top.row("not up", String.join(", ", names));
        }
        top.row("volumes", counts(volumes.size(),
                (Map<String, Long>) ((Map<String, Object>) status.get("volumes")).get("byState")));
        top.print(out);
        var copies = (List<Map<String, Object>>) status.get("copiesNotInSync");
        if (!copies.isEmpty()) {
            out.println();
            out.println("copies not in sync:");
            var t = new Table("VOLUME", "NODE", "ROLE", "STATE");
            copies.forEach(c -> t.row(c.get("volume"), c.get("node"), c.get("role"), c.get("state")));
            t.print(out);
        }
        var running = new ArrayList<String[]>();
        for (Volume v : volumes) {
            for (VolumeCopy c : v.copies()) {
                if (c.state() == CopyState.SYNCING) {
                    running.add(new String[] {v.name(), c.nodeId(), VolumeCommand.progress(c)});
                }
            }
        }
        if (!running.isEmpty()) {
            out.println();
            out.println("resyncs running:");
            var t = new Table("VOLUME", "NODE", "PROGRESS");
            running.forEach(r -> t.row((Object[]) r));
            t.print(out);
        }
    }

    /** @return e.g. {@code http://10.0.0.1:8080 (answered by http://10.0.0.2:8080, a follower)} */
    private static String leaderLine(Leader leader, String answeredBy) {
        if (leader == null) {
            return "unknown (the server has no GET /v1/leader), answered by " + answeredBy;
        }
        String who = leader.leader() == null ? "none known" : leader.leader();
        return who + " (answered by " + answeredBy + ", " + (leader.isLeader() ? "the leader" : "a follower") + ")";
    }

    /** @return e.g. {@code etcd, reachable} or {@code etcd, UNREACHABLE: ...} */
    private static String storeLine(Leader leader) {
        if (leader == null || leader.metadataStore() == null) {
            return "unknown (the server does not report it)";
        }
        var m = leader.metadataStore();
        return m.kind() + ", " + (m.reachable() ? "reachable" : "UNREACHABLE: " + m.detail());
    }

    /** @return e.g. {@code 3 total: 2 up, 1 down, 0 draining} */
    private static String counts(int total, Map<String, Long> byState) {
        var parts = new ArrayList<String>();
        byState.forEach((state, n) -> parts.add(n + " " + state));
        return total + " total: " + String.join(", ", parts);
    }

    /** @return a map of these key/value pairs, in this order (null values kept, for JSON) */
    private static Map<String, Object> ordered(Object... keyValues) {
        var m = new LinkedHashMap<String, Object>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], keyValues[i + 1]);
        }
        return m;
    }
}
