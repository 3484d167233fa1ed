package io.rdmablock.cli;

import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code rdmablock volume create|list|get|resize|require-auth|set-hosts|qos|delete|promote|rollback|verify}:
 * volumes over the management REST API.
 * {@code volume get NAME --watch} redraws the volume every second while a copy is syncing (docs/resync.md).
 */
@Command(name = "volume", description = "Create, list, inspect, grow, delete, promote and roll back volumes.",
        mixinStandardHelpOptions = true,
        subcommands = {VolumeCommand.Create.class, VolumeCommand.ListVolumes.class, VolumeCommand.Get.class,
                VolumeCommand.Resize.class, VolumeCommand.RequireAuth.class, VolumeCommand.SetHosts.class,
                VolumeCommand.Qos.class, VolumeCommand.Delete.class,
                VolumeCommand.Promote.class, VolumeCommand.RollbackVolume.class, VolumeVerify.class})
public final class VolumeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.BAD_INPUT;
    }

    static void print(PrintWriter out, OutputOptions output, List<Volume> volumes) {
        if (output.json()) {
            out.println(Json.pretty(volumes));
            out.flush();
            return;
        }
        var table = new Table("NAME", "SIZE", "LBA", "STATE", "REPLICAS", "IN-SYNC", "EPOCH", "NODE", "FABRIC",
                "SUBNQN", "HOSTS");
        for (Volume v : volumes) {
            table.row(v.name(), Sizes.format(v.sizeBytes()), v.lbaSize(), v.state().wireName(), v.replicas(),
                    inSync(v), v.epoch(), v.nodeId(), v.fabricAddress(), v.subnqn(), v.connectedHosts().size());
        }
        table.print(out);
    }

    /**
     * In-sync copies of replicas, e.g. {@code 2/3} (a server before replication: {@code 1/1}), at most
     * {@code replicas} of them; then, while copies move (docs/resync.md), {@code , N syncing} for copies being
     * resynced and {@code , rebuild +N} for copies the record holds beyond {@code replicas} (a replacement, or the
     * copy it replaces not yet removed): e.g. {@code 1/2, 1 syncing, rebuild +1}.
     */
    static String inSync(Volume v) {
        if (v.copies().isEmpty()) {
            return v.replicas() + "/" + v.replicas();
        }
        StringBuilder s = new StringBuilder().append(Math.min(v.inSyncCount(), v.replicas())).append('/')
                .append(v.replicas());
        long syncing = v.copies().stream().filter(c -> c.state() == io.rdmablock.mgmt.client.CopyState.SYNCING)
                .count();
        if (syncing > 0) {
            s.append(", ").append(syncing).append(" syncing");
        }
        int extra = v.copies().size() - v.replicas();
        if (extra > 0) {
            s.append(", rebuild +").append(extra);
        }
        return s.toString();
    }

    static void print(PrintWriter out, OutputOptions output, Volume v) {
        if (output.json()) {
            out.println(Json.pretty(v));
            out.flush();
            return;
        }
        var table = new Table("FIELD", "VALUE");
        table.row("name", v.name()).row("id", v.id())
                .row("size", Sizes.format(v.sizeBytes()) + " (" + v.sizeBytes() + " bytes)")
                .row("lbaSize", v.lbaSize()).row("replicas", v.replicas()).row("minInSync", v.minInSync())
                .row("inSync", inSync(v)).row("epoch", v.epoch()).row("state", v.state().wireName())
                .row("node", v.nodeId()).row("fabricAddress", v.fabricAddress()).row("subnqn", v.subnqn())
                .row("nsid", v.nsid())
                .row("allowedHosts", v.allowedHosts().isEmpty() ? "(any)" : String.join(",", v.allowedHosts()))
                .row("connectedHosts", v.connectedHosts().isEmpty() ? "(none)" : String.join(",", v.connectedHosts()))
                .row("requireAuth", v.requireAuth())
                .row("qos", VolumeQosOptions.describe(v.qos()))
                .row("qosHeld", v.qosActivity() == null ? "0" : v.qosActivity().heldCommands() + " commands now, "
                        + String.format(java.util.Locale.ROOT, "%.3f", v.qosActivity().delayedSeconds())
                        + " s delayed in total")
                .row("createdAt", v.createdAt());
        if (v.rollback() != null) {
            var r = v.rollback();
            table.row("rollback", r.state() + " to snapshot " + r.snapshot() + (r.pending().isEmpty() ? ""
                    : ", copies pending on " + String.join(",", r.pending()))
                    + (r.detail() == null ? "" : ": " + r.detail()));
        }
        table.print(out);
        if (!v.copies().isEmpty()) {
            out.println();
            var copies = new Table("NODE", "ROLE", "STATE", "FABRIC", "PROGRESS");
            v.copies().forEach(c -> copies.row(c.nodeId(), c.role().wireName(), c.state().wireName(),
                    c.fabricAddress().isEmpty() ? null : c.fabricAddress(), progress(c)));
            copies.print(out);
        }
    }

    /** Width of the progress bar, characters. */
    static final int BAR_WIDTH = 20;

    /**
     * @return a syncing copy's progress, e.g. {@code [#####---------------] 25% 1 MiB/4 MiB eta 3s}; {@code -} when
     *         the copy is not syncing or no progress was reported yet
     */
    static String progress(VolumeCopy c) {
        if (c.state() != CopyState.SYNCING || c.syncedBytes() == null || c.totalBytes() == null) {
            return c.state() == CopyState.SYNCING ? "(starting)" : "-";
        }
        long total = Math.max(0, c.totalBytes());
        long done = Math.min(Math.max(0, c.syncedBytes()), total);
        int percent = total == 0 ? 100 : (int) (done * 100 / total);
        int filled = percent * BAR_WIDTH / 100;
        return "[" + "#".repeat(filled) + "-".repeat(BAR_WIDTH - filled) + "] " + percent + "% "
                + Sizes.format(done) + "/" + Sizes.format(total)
                + (c.etaSeconds() == null ? "" : " eta " + c.etaSeconds() + "s");
    }

    @Command(name = "create", description = "Create a volume: its copies go to distinct up nodes, the most free "
            + "capacity first (that one holds the primary).",
            mixinStandardHelpOptions = true)
    static final class Create extends MgmtCall {

        @Parameters(index = "0", paramLabel = "NAME", description = "Volume name: [a-z0-9][a-z0-9._-]{0,62}.")
        String name;

        @Option(names = {"-s", "--size"}, required = true, paramLabel = "SIZE",
                description = "Size: bytes or with suffix K/M/G/T (powers of 1024); a multiple of 1 MiB, 1 MiB..64 TiB.")
        String size;

        @Option(names = "--lba-size", paramLabel = "BYTES", defaultValue = "4096",
                description = "Logical block size: 512 or 4096 (default ${DEFAULT-VALUE}).")
        int lbaSize;

        @Option(names = "--replicas", paramLabel = "R", defaultValue = "1",
                description = "Copies on distinct nodes, " + Limits.MIN_REPLICAS + ".." + Limits.MAX_REPLICAS
                        + " (default ${DEFAULT-VALUE}).")
        int replicas;

        @Option(names = "--min-in-sync", paramLabel = "M",
                description = "Fewest in-sync copies with which writes are accepted, 1..R (default max(1, R-1)).")
        Integer minInSync;

        @Option(names = "--allow-host", paramLabel = "HOSTNQN",
                description = "Host NQN allowed to connect (repeatable). Without it and without --allow-any-host "
                        + "the volume admits no host until set (volume set-hosts).")
        List<String> allowedHosts = new ArrayList<>();

        @Option(names = "--allow-any-host", description = "Any host may connect (allowedHosts [\"*\"]; warned about: "
                + "anyone reaching a node's fabric port can read and write the volume).")
        boolean anyHost;

        @Option(names = "--require-auth", description = "Only hosts with a DH-HMAC-CHAP secret (rdmablock host set) "
                + "may connect, after authenticating.")
        boolean requireAuth;

        @picocli.CommandLine.Mixin
        VolumeQosOptions qos = new VolumeQosOptions();

        @Override
        public Integer call() {
            long sizeBytes = Sizes.parse("--size", size);
            Limits.checkName("NAME", name);
            Limits.checkSize("--size", sizeBytes);
            if (!Limits.LBA_SIZES.contains(lbaSize)) {
                throw Limits.invalid("--lba-size", Integer.toString(lbaSize), "must be one of " + Limits.LBA_SIZES);
            }
            if (replicas < Limits.MIN_REPLICAS || replicas > Limits.MAX_REPLICAS) {
                throw Limits.invalid("--replicas", Integer.toString(replicas),
                        "min=" + Limits.MIN_REPLICAS + ", max=" + Limits.MAX_REPLICAS);
            }
            int m = minInSync == null ? Limits.defaultMinInSync(replicas) : minInSync;
            Limits.checkMinInSync("--min-in-sync", m, replicas);
            List<String> hosts = hostsOf("--allow-host", allowedHosts, anyHost);
            var request = new CreateVolumeRequest(name, sizeBytes, lbaSize, replicas, m, hosts, requireAuth,
                    qos.limits());
            Limits.check(request);
            print(out(), output, client().createVolume(request));
            warnAboutHosts(spec.commandLine().getErr(), name, hosts);
            return ExitCodes.OK;
        }
    }

    @Command(name = "list", description = "List every volume.", mixinStandardHelpOptions = true)
    static final class ListVolumes extends MgmtCall {

        @Override
        public Integer call() {
            print(out(), output, client().listVolumes());
            return ExitCodes.OK;
        }
    }

    @Command(name = "get", description = "Show one volume (with --watch: redrawn every second while a copy is "
            + "syncing).", mixinStandardHelpOptions = true)
    static final class Get extends MgmtCall {
        /** Longest --watch-timeout-s (a day). */
        static final long MAX_WATCH_TIMEOUT_S = 86_400;
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Option(names = "--watch", description = "Redraw every second until no copy is syncing (or Ctrl-C).")
        boolean watch;

        @Option(names = "--watch-timeout-s", paramLabel = "S", description = "Stop watching after S seconds, 1.."
                + MAX_WATCH_TIMEOUT_S + " (default: no bound); exit 1 if a copy is still syncing then.")
        Long watchTimeoutS;

        /** {@code --watch-timeout}: the old spelling of {@code --watch-timeout-s}, kept for scripts. */
        @Option(names = "--watch-timeout", paramLabel = "S", hidden = true)
        Long watchTimeoutAlias;

        /** Redraw interval, ms (tests shorten it). */
        @Option(names = "--poll-ms", hidden = true, defaultValue = "1000")
        long intervalMs;

        @Override
        public Integer call() throws InterruptedException {
            Limits.checkName("NAME", name);
            if (watchTimeoutS == null) {
                watchTimeoutS = watchTimeoutAlias;
            }
            if (watchTimeoutS != null && (watchTimeoutS < 1 || watchTimeoutS > MAX_WATCH_TIMEOUT_S)) {
                throw Limits.invalid("--watch-timeout-s", Long.toString(watchTimeoutS), "min=1, max="
                        + MAX_WATCH_TIMEOUT_S);
            }
            if (watchTimeoutS != null && !watch) {
                throw Limits.invalid("--watch-timeout-s", Long.toString(watchTimeoutS), "only with --watch");
            }
            Volume v = client().getVolume(name);
            print(out(), output, v);
            if (!watch) {
                return ExitCodes.OK;
            }
            long deadline = watchTimeoutS == null ? Long.MAX_VALUE
                    : System.nanoTime() + watchTimeoutS * 1_000_000_000L;
            while (syncing(v)) {
                if (System.nanoTime() - deadline >= 0) {
                    out().println("--watch-timeout-s " + watchTimeoutS + " reached: a copy is still syncing");
                    out().flush();
                    return ExitCodes.FAILED;
                }
                Thread.sleep(intervalMs);
                v = client().getVolume(name);
                if (!output.json()) {
                    out().println();
                }
                print(out(), output, v);
            }
            return ExitCodes.OK;
        }

        static boolean syncing(Volume v) {
            return v.copies().stream().anyMatch(c -> c.state() == CopyState.SYNCING);
        }
    }

    @Command(name = "resize", description = "Grow a volume (shrinking is refused).", mixinStandardHelpOptions = true)
    static final class Resize extends MgmtCall {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = {"-s", "--size"}, required = true, paramLabel = "SIZE",
                description = "New size (bytes or K/M/G/T); a multiple of 1 MiB, not smaller than now.")
        String size;

        @Override
        public Integer call() {
            long sizeBytes = Sizes.parse("--size", size);
            Limits.checkName("NAME", name);
            Limits.checkSize("--size", sizeBytes);
            print(out(), output, client().resizeVolume(name, sizeBytes));
            return ExitCodes.OK;
        }
    }

    @Command(name = "require-auth", description = "Switch whether only hosts with a DH-HMAC-CHAP secret (rdmablock "
            + "host set) may connect; applies to connections after the nodes' next heartbeat.",
            mixinStandardHelpOptions = true)
    static final class RequireAuth extends MgmtCall {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Parameters(index = "1", paramLabel = "on|off")
        String onOff;

        @Override
        public Integer call() {
            Limits.checkName("NAME", name);
            if (!"on".equals(onOff) && !"off".equals(onOff)) {
                throw Limits.invalid("on|off", onOff, "must be on or off");
            }
            print(out(), output, client().requireAuth(name, "on".equals(onOff)));
            return ExitCodes.OK;
        }
    }

    @Command(name = "set-hosts", description = "Replace the hosts a volume admits (--allow-host NQN, repeatable; "
            + "--allow-any-host; --none); applies to connections after the nodes' next heartbeat, connected hosts "
            + "stay.", mixinStandardHelpOptions = true)
    static final class SetHosts extends MgmtCall {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--allow-host", paramLabel = "HOSTNQN", description = "Host NQN allowed to connect "
                + "(repeatable).")
        List<String> allowedHosts = new ArrayList<>();
        @Option(names = "--allow-any-host", description = "Any host may connect (allowedHosts [\"*\"]).")
        boolean anyHost;
        @Option(names = "--none", description = "No host may connect any more (connected hosts stay).")
        boolean none;

        @Override
        public Integer call() {
            Limits.checkName("NAME", name);
            if (none && (anyHost || !allowedHosts.isEmpty())) {
                throw Limits.invalid("--none", "true", "excludes --allow-host and --allow-any-host");
            }
            if (!none && !anyHost && allowedHosts.isEmpty()) {
                throw Limits.invalid("--allow-host", "(none)", "give --allow-host NQN (repeatable), --allow-any-host "
                        + "or --none");
            }
            List<String> hosts = hostsOf("--allow-host", allowedHosts, anyHost);
            Limits.checkAllowedHosts(hosts);
            print(out(), output, client().allowedHosts(name, hosts));
            warnAboutHosts(spec.commandLine().getErr(), name, hosts);
            return ExitCodes.OK;
        }
    }

    @Command(name = "qos", description = "Replace a volume's limits (docs/qos.md): options not given are no limit; "
            + "--none lifts them all. The primary enforces them from its next heartbeat (about 1 s); I/O over a "
            + "limit waits, it is not failed.", mixinStandardHelpOptions = true)
    static final class Qos extends MgmtCall {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @picocli.CommandLine.Mixin
        VolumeQosOptions qos = new VolumeQosOptions();
        @Option(names = "--none", description = "Lift every limit.")
        boolean none;

        @Override
        public Integer call() {
            Limits.checkName("NAME", name);
            io.rdmablock.mgmt.client.VolumeQos limits = qos.limits();
            if (none && !limits.unlimited()) {
                throw Limits.invalid("--none", "true", "excludes the limit options");
            }
            if (!none && limits.unlimited()) {
                throw Limits.invalid("--iops", "(none)", "give a limit (--iops N, --bytes-per-sec N, ...) or --none");
            }
            limits.check();
            print(out(), output, client().setQos(name, limits));
            return ExitCodes.OK;
        }
    }

    /** The allowedHosts of {@code --allow-host} values or {@code --allow-any-host} (not both). */
    static List<String> hostsOf(String option, List<String> hosts, boolean anyHost) {
        if (anyHost && !hosts.isEmpty()) {
            throw Limits.invalid(option, String.join(",", hosts), "excludes --allow-any-host");
        }
        return anyHost ? List.of(Limits.ANY_HOST) : hosts;
    }

    /** Says on stderr when a volume admits any host or none. */
    static void warnAboutHosts(PrintWriter err, String name, List<String> hosts) {
        if (hosts.contains(Limits.ANY_HOST)) {
            err.println("warning: volume " + name + " admits any host: anyone who reaches a node's fabric port can "
                    + "read and write it (name its hosts with volume set-hosts " + name + " --allow-host NQN)");
        } else if (hosts.isEmpty()) {
            err.println("note: volume " + name + " admits no host yet: volume set-hosts " + name
                    + " --allow-host NQN (or --allow-any-host)");
        }
        err.flush();
    }

    @Command(name = "delete", description = "Delete a volume (refused while a host is connected, unless --force).",
            mixinStandardHelpOptions = true)
    static final class Delete extends MgmtCall {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--force", description = "Delete even while hosts are connected.")
        boolean force;

        @Override
        public Integer call() {
            Limits.checkName("NAME", name);
            print(out(), output, client().deleteVolume(name, force));
            return ExitCodes.OK;
        }
    }

    @Command(name = "promote", description = "Make the copy on a node the primary (operator failover; refused while "
            + "the primary still heartbeats within the lease).", mixinStandardHelpOptions = true)
    static final class Promote extends MgmtCall {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--node", required = true, paramLabel = "NODE", description = "Node whose copy becomes primary.")
        String node;
        @Option(names = "--accept-data-loss", description = "Promote a copy that is not in sync: writes acknowledged "
                + "since it went stale are lost, and every other copy becomes stale.")
        boolean acceptDataLoss;

        @Override
        public Integer call() {
            Limits.checkName("NAME", name);
            Limits.checkName("--node", node);
            print(out(), output, client().promoteVolume(name, node, acceptDataLoss));
            return ExitCodes.OK;
        }
    }

    @Command(name = "rollback", description = "Make the volume's content a snapshot's on every copy (refused while "
            + "a host is connected, unless --force; waits up to 10 s for every copy).", mixinStandardHelpOptions = true)
    static final class RollbackVolume extends MgmtCall {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--to", required = true, paramLabel = "SNAP", description = "The ready snapshot to roll "
                + "back to.")
        String snapshot;
        @Option(names = "--force", description = "Disconnect connected hosts first (they are refused until the "
                + "rollback is done on every copy).")
        boolean force;

        @Override
        public Integer call() {
            Limits.checkName("NAME", name);
            Limits.checkSnapshotName("--to", snapshot);
            Volume v = mgmt.client(SnapshotCommand.WAITING_TIMEOUT_MS).rollback(name, snapshot, force);
            var r = v.rollback();
            boolean failed = r != null && io.rdmablock.mgmt.client.VolumeRollback.FAILED.equals(r.state());
            if (output.json()) {
                print(out(), output, v);
            } else if (r == null) {
                out().println("rolled back volume " + name + " to snapshot " + snapshot + " on every copy");
            } else {
                print(out(), output, v);
                out().println(failed ? "the rollback failed on a copy: see the rollback row"
                        : "not yet done on every copy: see rdmablock volume get " + name);
            }
            out().flush();
            return failed ? ExitCodes.FAILED : ExitCodes.OK;
        }
    }
}
