package io.rdmablock.cli;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeKeyRotation;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.util.List;

/**
 * {@code rdmablock node list}, {@code node drain NODE}, {@code node undrain NODE}, {@code node rotate-key NODE}
 * and {@code node remove NODE}:
 * subcommands added under {@code node}
 * (whose own body, running a storage node, lives in the storage-node module).
 */
final class NodeAdminCommands {
    private NodeAdminCommands() {
    }

    static void print(PrintWriter out, OutputOptions output, List<Node> nodes) {
        if (output.json()) {
            out.println(Json.pretty(nodes));
            out.flush();
            return;
        }
        var table = new Table("NODE", "STATE", "FABRIC", "CAPACITY", "FREE", "LAST-HEARTBEAT", "METRICS");
        for (Node n : nodes) {
            table.row(n.nodeId(), n.state().wireName(), n.fabricAddress(), Sizes.format(n.capacityBytes()),
                    Sizes.format(n.freeBytes()), n.lastHeartbeat(), n.metricsUrl() == null || n.metricsUrl().isEmpty()
                            ? "-" : n.metricsUrl());
        }
        table.print(out);
    }

    @Command(name = "list", description = "List storage nodes.", mixinStandardHelpOptions = true)
    static final class ListNodes extends MgmtCall {

        @Override
        public Integer call() {
            print(out(), output, client().listNodes());
            return ExitCodes.OK;
        }
    }

    /** A call about one node, named by its id ({@code NODE}, checked like every name). */
    abstract static class OneNodeCall extends MgmtCall {
        @Parameters(index = "0", paramLabel = "NODE")
        String nodeId;

        /** @return the node id, checked (a bad one is exit 2 naming NODE and its bounds) */
        String node() {
            Limits.checkName("NODE", nodeId);
            return nodeId;
        }
    }

    @Command(name = "drain", description = "Place no new volume on a node and move its copies to other nodes (a "
            + "primary there is switched over once its replacement is in sync).", mixinStandardHelpOptions = true)
    static final class Drain extends OneNodeCall {
        @Override
        public Integer call() {
            print(out(), output, List.of(client().drainNode(node())));
            return ExitCodes.OK;
        }
    }

    @Command(name = "undrain", description = "Place volumes on a node again and stop moving its copies (undoes "
            + "drain; replacements made for them are removed).",
            mixinStandardHelpOptions = true)
    static final class Undrain extends OneNodeCall {
        @Override
        public Integer call() {
            print(out(), output, List.of(client().undrainNode(node())));
            return ExitCodes.OK;
        }
    }

    @Command(name = "rotate-key", description = "Give a node a new node key (the secrets of its node links change at "
            + "the next heartbeats); prints the new key's fingerprint, never the key.", mixinStandardHelpOptions = true)
    static final class RotateKey extends OneNodeCall {
        @Override
        public Integer call() {
            NodeKeyRotation r = client().rotateNodeKey(node());
            if (output.json()) {
                out().println(Json.pretty(r));
            } else {
                out().println("node " + r.nodeId() + " has a new node key, fingerprint " + r.keyFingerprint());
            }
            out().flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "remove", description = "Forget a node (e.g. a dead one); its copies are rebuilt on other nodes. "
            + "Refused while it holds a volume with no in-sync copy elsewhere.", mixinStandardHelpOptions = true)
    static final class Remove extends OneNodeCall {
        @Override
        public Integer call() {
            String nodeId = node();
            client().removeNode(nodeId);
            if (output.json()) {
                out().println("{\"removed\": \"" + nodeId + "\"}");
            } else {
                out().println("node " + nodeId + " removed");
            }
            out().flush();
            return ExitCodes.OK;
        }
    }
}
