package io.rdmablock.cli;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeKeyRotation;
import io.rdmablock.mgmt.client.NodeBackground;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.util.List;

/**
 * {@code rdmablock node list}, {@code node get NODE}, {@code node background NODE}, {@code node drain NODE},
 * {@code node undrain NODE}, {@code node rotate-key NODE} and {@code node remove NODE}:
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
        var table = new Table("NODE", "STATE", "FABRIC", "CAPACITY", "FREE", "LAST-HEARTBEAT", "BACKGROUND",
                "METRICS");
        for (Node n : nodes) {
            table.row(n.nodeId(), n.state().wireName(), n.fabricAddress(), Sizes.format(n.capacityBytes()),
                    Sizes.format(n.freeBytes()), n.lastHeartbeat(), background(n),
                    n.metricsUrl() == null || n.metricsUrl().isEmpty() ? "-" : n.metricsUrl());
        }
        table.print(out);
    }

    /**
     * @return the node's background budget (docs/qos.md): what is set, then what the node reported in effect, e.g.
     *         {@code set 1..10 MiB/s; now 5.0 MiB/s in 1..10} or {@code start-up; now 40.0 MiB/s in 4..40}
     *         ({@code now ?} before the node reported one)
     */
    static String background(Node n) {
        NodeBackground set = n.background();
        String text = set == null ? "start-up" : "set " + set.minMiBps() + ".." + set.maxMiBps() + " MiB/s";
        var e = n.backgroundInEffect();
        if (e == null) {
            return text + "; now ?";
        }
        return text + "; now " + mib(e.rateBytesPerSec()) + " MiB/s in " + mibInt(e.floorBytesPerSec()) + ".."
                + mibInt(e.ceilingBytesPerSec());
    }

    private static String mib(long bytesPerSec) {
        return String.format(java.util.Locale.ROOT, "%.1f", bytesPerSec / (double) (1L << 20));
    }

    private static String mibInt(long bytesPerSec) {
        return bytesPerSec % (1L << 20) == 0 ? Long.toString(bytesPerSec >> 20) : mib(bytesPerSec);
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

    @Command(name = "get", description = "Show one storage node, with its background budget as set and as in "
            + "effect.", mixinStandardHelpOptions = true)
    static final class Get extends OneNodeCall {
        @Override
        public Integer call() {
            Node n = client().getNode(node());
            if (output.json()) { // one object, as volume get
                out().println(Json.pretty(n));
                out().flush();
            } else {
                print(out(), output, List.of(n));
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "background", description = "Set a node's background budget (docs/qos.md): the bounds of the "
            + "rate of its resyncs, rebuilds and verifies, which adapts between them to the foreground's latency; "
            + "in effect on the node at its next heartbeat (about 0.5 s). --reset goes back to the node's start-up "
            + "values (--resync-mib-s, --resync-min-mib-s).", mixinStandardHelpOptions = true)
    static final class Background extends OneNodeCall {
        @Option(names = "--max-mib-s", paramLabel = "N", description = "Ceiling, MiB/s (1..100000).")
        Integer maxMibS;
        @Option(names = "--min-mib-s", paramLabel = "N",
                description = "Floor, MiB/s (1..ceiling; default 4, or the ceiling when lower).")
        Integer minMibS;
        @Option(names = "--reset", description = "Back to the node's start-up values (excludes --max-mib-s, "
                + "--min-mib-s).")
        boolean reset;

        @Override
        public Integer call() {
            String nodeId = node();
            NodeBackground bounds = bounds();
            print(out(), output, List.of(client().setNodeBackground(nodeId, bounds)));
            return ExitCodes.OK;
        }

        /** @return the bounds given, checked (exit 2 naming the option and its bounds), or null for --reset */
        NodeBackground bounds() {
            if (reset) {
                if (maxMibS != null || minMibS != null) {
                    throw Limits.invalid("--reset", "true", "excludes --max-mib-s and --min-mib-s");
                }
                return null;
            }
            if (maxMibS == null) {
                throw Limits.invalid("--max-mib-s", "(none)", "give --max-mib-s N (1.." + NodeBackground.MAX_MIB_S
                        + " MiB/s) or --reset");
            }
            range("--max-mib-s", maxMibS, NodeBackground.MAX_MIB_S);
            int min = minMibS == null ? Math.min(4, maxMibS) : minMibS;
            range("--min-mib-s", min, maxMibS);
            return new NodeBackground(maxMibS, min);
        }

        private static void range(String option, int value, int max) {
            if (value < NodeBackground.MIN_MIB_S || value > max) {
                throw Limits.invalid(option, Integer.toString(value), "min=" + NodeBackground.MIN_MIB_S + ", max="
                        + max + (option.equals("--min-mib-s") ? " (--max-mib-s)" : "") + " (MiB/s)");
            }
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
