package io.rdmablock.e2e;

import io.rdmablock.e2e.CampaignLoad.Check;
import io.rdmablock.e2e.CampaignReport.Stats;
import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The failure campaign of issue 12 ({@code ops/chaos/failover}, docs/chaos.md): a management server in this JVM,
 * three storage-node processes (soft provider; each in its own network namespace when the script set them up), an
 * R=3 volume opened through {@link VolumeLocator#open}, verified write/read load checked against an
 * acknowledged-write model, and per cycle one fault, healed, then a full read-back. Not a JUnit test (surefire does
 * not pick it up): {@code main} is run by the script.
 *
 * <p>Arguments: {@code --dir D} (required), {@code --cycles N} (total, round robin over the kinds), {@code --kinds
 * k1,k2}, {@code --seconds-per-cycle S} (how long a fault is held), {@code --recover-s S} (bound of the wait for I/O
 * after the heal), {@code --max-s S} (bound of the whole run), {@code --lease-ms MS}, {@code --max-pause-ms MS} (a
 * longer pause fails the cycle; default no bound), {@code --replica-timeout-ms MS} (the nodes', default 3000),
 * {@code --expect-failover true} (primary-kill and primary-stop must end with another primary; a primary cut from
 * the management plane only keeps serving on its peer lease, docs/failover.md),
 * {@code --netns PREFIX
 * --subnet A.B.C} (network namespaces {@code PREFIX-n1..3} at {@code A.B.C.11..13}, management at {@code A.B.C.1}),
 * {@code --no-netns-reason TEXT} (why there are none: the network kinds are skipped with it), {@code --etcd E --mgmt M}
 * (a highly available management plane instead of the one server in this JVM: E etcd members and M management
 * server processes, {@link CampaignMgmtPlane}; enables the opt-in kind {@code mgmt-leader-kill}),
 * {@code --snapshot-every-s S} (a snapshot of the volume under load every S seconds, {@link SnapshotTaker}; each one
 * made ready is checked at the end against the writes' history, {@link SnapshotAudit}; default 5, 0 = none).
 */
public final class FailoverCampaign {
    private static final int NODES = 3;

    // ---- options ---------------------------------------------------------------------------------------------
    private final Path dir;
    private int cycles;
    private final List<FaultKind> kinds = new ArrayList<>();
    private long holdMs = 4_000;
    private long recoverS = 60;
    private long maxS = 540;
    private long leaseMs = 2_000;
    /** The nodes' {@code --replica-timeout-ms}: 1 s dropped live secondaries on a 2-core box at load 13. */
    private long replicaTimeoutMs = 3_000;
    /** A primary-kill, primary-stop or cut-primary-mgmt cycle after which the old primary still is primary fails. */
    private boolean expectFailover;
    /** A cycle whose pause is longer fails (0 = no bound). */
    private long maxPauseMs;
    private String netns;
    private String subnet;
    private String noNetnsReason = "no network namespaces were set up (run through ops/chaos/failover as root)";
    private final long volumeBytes = 64L << 20;
    /** {@code --etcd E --mgmt M}: 0 and 1 = the management server in this JVM (RocksDB), the default. */
    private int etcdMembers;
    private int mgmtServers = 1;
    /** Time from a cycle's end to all copies in sync again, per resync waited for (ms). */
    private final java.util.List<Long> resyncMs = new java.util.ArrayList<>();
    private int resyncTimeouts;
    /** {@code --snapshot-every-s}: 0 = no snapshots. */
    private long snapshotEveryMs = 5_000;

    // ---- state -----------------------------------------------------------------------------------------------
    private NodeCluster cluster;
    private final Map<FaultKind, Stats> stats = new EnumMap<>(FaultKind.class);
    private final Random rnd = new Random(12);
    private CampaignLoad session;
    private int volumeSerial;
    private final long startNs = System.nanoTime();
    /** Zombie probe and split-brain evidence; made with the cluster. */
    private SplitBrainChecks checks;
    /** The highly available management plane, or null. */
    private CampaignMgmtPlane plane;
    private int probeSerial;
    /** The current volume's snapshot taker (null without snapshots) and the end-of-run check of them all. */
    private SnapshotTaker taker;
    private final SnapshotAudit audit = new SnapshotAudit();
    /** The takers' client: a create waits up to 10 s on the server, so its timeout is longer than the cluster's. */
    private MgmtClient snapshotClient;

    private FailoverCampaign(Path dir) {
        this.dir = dir;
    }

    public static void main(String[] args) throws Exception {
        Path dir = null;
        Map<String, String> opt = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || i + 1 >= args.length) {
                usage("bad argument '" + a + "'");
            }
            opt.put(a.substring(2), args[++i]);
        }
        if (!opt.containsKey("dir")) {
            usage("--dir is required");
        }
        dir = Path.of(opt.remove("dir"));
        FailoverCampaign c = new FailoverCampaign(dir);
        if (opt.containsKey("etcd") || opt.containsKey("mgmt")) {
            c.etcdMembers = Integer.parseInt(opt.getOrDefault("etcd", "0"));
            c.mgmtServers = Integer.parseInt(opt.getOrDefault("mgmt", "1"));
            opt.remove("etcd");
            opt.remove("mgmt");
            try {
                CampaignMgmtPlane.checkSizes(c.etcdMembers, c.mgmtServers);
            } catch (IllegalArgumentException e) {
                usage(e.getMessage());
            }
        }
        String kinds = opt.remove("kinds");
        if (kinds == null || kinds.isBlank() || kinds.equals("all")) {
            c.kinds.addAll(FaultKind.all(c.etcdMembers > 0));
        } else {
            for (String k : kinds.split(",")) {
                FaultKind kind = FaultKind.of(k);
                if (!c.kinds.contains(kind)) {
                    c.kinds.add(kind);
                }
            }
        }
        c.cycles = Integer.parseInt(opt.getOrDefault("cycles", Integer.toString(2 * c.kinds.size())));
        opt.remove("cycles");
        if (opt.containsKey("seconds-per-cycle")) {
            c.holdMs = (long) (Double.parseDouble(opt.remove("seconds-per-cycle")) * 1000);
        }
        if (opt.containsKey("recover-s")) {
            c.recoverS = Long.parseLong(opt.remove("recover-s"));
        }
        if (opt.containsKey("max-s")) {
            c.maxS = Long.parseLong(opt.remove("max-s"));
        }
        if (opt.containsKey("lease-ms")) {
            c.leaseMs = Long.parseLong(opt.remove("lease-ms"));
        }
        if (opt.containsKey("replica-timeout-ms")) {
            c.replicaTimeoutMs = Long.parseLong(opt.remove("replica-timeout-ms"));
        }
        if (opt.containsKey("expect-failover")) {
            c.expectFailover = Boolean.parseBoolean(opt.remove("expect-failover"));
        }
        if (opt.containsKey("max-pause-ms")) {
            c.maxPauseMs = Long.parseLong(opt.remove("max-pause-ms"));
        }
        if (opt.containsKey("snapshot-every-s")) {
            c.snapshotEveryMs = (long) (Double.parseDouble(opt.remove("snapshot-every-s")) * 1000);
        }
        c.netns = opt.remove("netns");
        c.subnet = opt.remove("subnet");
        if (opt.containsKey("no-netns-reason")) {
            c.noNetnsReason = opt.remove("no-netns-reason");
        }
        if (!opt.isEmpty()) {
            usage("unknown options " + opt.keySet());
        }
        if (c.cycles < 1 || c.cycles > 10_000 || c.holdMs < 100 || c.holdMs > 600_000 || c.recoverS < 5
                || c.maxS < 30 || (c.snapshotEveryMs != 0 && c.snapshotEveryMs < 500)) {
            usage("out of bounds: cycles 1..10000, seconds-per-cycle 0.1..600, recover-s >= 5, max-s >= 30, "
                    + "snapshot-every-s 0 or >= 0.5");
        }
        int rc;
        try {
            rc = c.run();
        } catch (Throwable t) {
            System.out.println("failover-campaign: FAILED: " + t);
            t.printStackTrace(System.out);
            rc = 1;
        }
        System.out.flush();
        Runtime.getRuntime().halt(rc); // device and Vert.x threads must not keep the JVM alive
    }

    private static void usage(String why) {
        System.err.println("failover-campaign: " + why + "\nusage: FailoverCampaign --dir D [--cycles N] [--kinds "
                + "k1,k2] [--seconds-per-cycle S] [--recover-s S] [--max-s S] [--lease-ms MS] [--max-pause-ms MS] "
                + "[--replica-timeout-ms MS] [--expect-failover true] [--etcd E --mgmt M] [--snapshot-every-s S] "
                + "[--netns P --subnet A.B.C] [--no-netns-reason TEXT]");
        System.exit(2);
    }

    static void say(String s) {
        System.out.println(s);
        System.out.flush();
    }

    private long elapsedS() {
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNs);
    }

    // ---- the run ---------------------------------------------------------------------------------------------

    private int run() throws Exception {
        List<FaultKind> runnable = new ArrayList<>();
        for (FaultKind k : kinds) {
            String skip = FaultKind.skipReason(k, netns != null, noNetnsReason, etcdMembers > 0);
            if (skip != null) {
                say("failover-campaign: kind " + k.label + " skipped: " + skip);
            } else {
                runnable.add(k);
            }
        }
        if (runnable.isEmpty()) {
            say("failover-campaign: no kind can run here");
            return 1;
        }
        for (FaultKind k : runnable) {
            stats.put(k, new Stats());
        }
        NodeCluster.Placement placement = netns == null ? NodeCluster.Placement.loopback() : network().placement();
        say("failover-campaign: " + cycles + " cycles of " + runnable.stream().map(k -> k.label).toList()
                + ", fault held " + holdMs + " ms, replica timeout " + replicaTimeoutMs + " ms, recovery bound "
                + recoverS + " s, run bound " + maxS + " s, "
                + (netns == null ? "loopback" : "network namespaces " + netns + "-n1..3 on " + subnet + ".0/24")
                + (etcdMembers > 0 ? ", " + mgmtServers + " management servers on " + etcdMembers + " etcd members"
                : "") + (snapshotEveryMs > 0 ? ", a snapshot every " + snapshotEveryMs + " ms" : ", no snapshots")
                + ", data in " + dir);
        Files.createDirectories(dir);
        boolean failed = false;
        int done = 0;
        List<String> nodeArgs = List.of("--replica-timeout-ms", Long.toString(replicaTimeoutMs));
        if (etcdMembers > 0) {
            plane = new CampaignMgmtPlane(dir, etcdMembers, mgmtServers, placement.mgmtHost(), NodeCluster.TOKEN,
                    leaseMs + 1_000, leaseMs);
            say("failover-campaign: management URLs " + plane.urlList() + ", leader "
                    + (plane.leaderIndex() >= 0 ? plane.url(plane.leaderIndex()) : "not reported (no /v1/leader)"));
            try {
                cluster = new NodeCluster(dir, NODES, nodeArgs, placement, plane.urlList());
            } catch (Exception | Error e) {
                plane.close();
                throw e;
            }
        } else {
            cluster = new NodeCluster(dir, NODES, "soft", nodeArgs, placement, leaseMs + 1_000);
        }
        checks = new SplitBrainChecks(cluster, NODES);
        snapshotClient = new MgmtClient(MgmtClient.parseUrls("management URLs", cluster.mgmtUrl()), NodeCluster.TOKEN,
                java.time.Duration.ofSeconds(20), null);
        boolean clusterOk = false;
        try {
            for (int i = 0; i < cycles; i++) {
                FaultKind kind = runnable.get(i % runnable.size());
                if (elapsedS() + estimateS(kind) > maxS) {
                    say("failover-campaign: run bound of " + maxS + " s reached after " + done + " of " + cycles
                            + " cycles");
                    failed = true;
                    break;
                }
                boolean ok;
                try {
                    ok = cycle(i + 1, kind);
                } catch (Exception e) {
                    // the cluster is in an unknown state (a node did not come back, a fault could not be set up):
                    // count the cycle unrecovered, report what ran and stop
                    say("cycle " + (i + 1) + " " + kind.label + ": FAILED: " + e + cluster.tails(15));
                    stats.get(kind).unrecovered++;
                    done++;
                    failed = true;
                    break;
                }
                done++;
                if (!ok) {
                    failed = true;
                }
            }
            if (session != null) {
                try {
                    retire("end of the run");
                } catch (RuntimeException e) {
                    say("  last read-back failed: " + e);
                    failed = true;
                }
            }
            clusterOk = true;
        } finally {
            if (session != null) {
                session.stop();
            }
            cluster.close();
            if (plane != null) {
                plane.close();
            }
        }
        java.util.List<Long> sorted = resyncMs.stream().sorted().toList();
        say(String.format("failover-campaign: resyncs=%d resync_p50_ms=%d resync_max_ms=%d resync_timeouts=%d",
                sorted.size(), sorted.isEmpty() ? 0 : sorted.get(sorted.size() / 2),
                sorted.isEmpty() ? 0 : sorted.get(sorted.size() - 1), resyncTimeouts));
        boolean snapshotsOk = true;
        if (snapshotEveryMs > 0 && clusterOk) { // the nodes are stopped (killed by close)
            long t0 = System.nanoTime();
            try {
                snapshotsOk = audit.run(cluster, NODES);
            } catch (java.io.IOException | RuntimeException e) {
                say("failover-campaign: snapshot check FAILED: " + e);
                snapshotsOk = false;
            }
            say("failover-campaign: snapshots read back from every copy and checked in "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms; requests refused or failed, by "
                    + "reason: " + audit.reasons());
        }
        String extra = snapshotEveryMs > 0 ? audit.figures() : "";
        return CampaignReport.print(stats, done, extra) || failed || !snapshotsOk ? 1 : 0;
    }

    private long estimateS(FaultKind kind) {
        long hold = kind == FaultKind.PRIMARY_STOP || kind == FaultKind.CUT_PRIMARY_MGMT
                ? Math.max(holdMs, 2 * leaseMs + 1_000) : holdMs;
        if (kind == FaultKind.MGMT_LEADER_KILL) { // + the create bound and a management server's restart
            hold = Math.max(hold, TimeUnit.SECONDS.toMillis(MgmtLeaderFault.BOUND_S)) + 30_000;
        }
        return TimeUnit.MILLISECONDS.toSeconds(hold) + 25; // + new volume, warm-up, restart, verification
    }


    private CampaignNetwork network() {
        return new CampaignNetwork(netns, subnet);
    }

    // ---- one cycle -------------------------------------------------------------------------------------------

    private boolean cycle(int n, FaultKind kind) throws Exception {
        Stats st = stats.get(kind);
        st.cycles++;
        ensureSession();
        CampaignLoad s = session;
        Volume before = cluster.client().getVolume(s.name);
        int primary = CampaignLoad.primaryOf(before);
        List<Integer> inSyncSecondaries = before.copies().stream()
                .filter(c -> c.role() == CopyRole.SECONDARY && c.state() == CopyState.IN_SYNC)
                .map(c -> NodeCluster.index(c.nodeId())).toList();
        s.lastKind = kind;
        s.model.awaitProgress(20, 30); // load is flowing before the fault
        long acked0 = s.model.writesAcked.get(), errors0 = s.model.writesFailed.get();
        long stale0 = s.model.stale.get(), corrupt0 = s.model.corrupt.get();
        String what;
        s.pause.open(System.nanoTime());
        boolean faultOk = true;
        long splitBefore = st.splitBrain;
        switch (kind) {
            case PRIMARY_KILL -> {
                what = "kill -9 of primary n" + primary;
                cluster.kill(primary);
                Thread.sleep(holdMs); // the fault's hold time: the scenario
                restart(primary);
            }
            case PRIMARY_STOP -> {
                long hold = Math.max(holdMs, 2 * leaseMs + 1_000);
                what = "SIGSTOP of primary n" + primary + " for " + hold + " ms (lease " + leaseMs + " ms), SIGCONT";
                cluster.signal(primary, "STOP");
                try {
                    Thread.sleep(hold); // the fault's hold time: the scenario
                } finally {
                    cluster.signal(primary, "CONT");
                }
                st.splitBrain += checks.zombieProbe(s, before, primary, "after SIGCONT");
            }
            case SECONDARY_KILL -> {
                int victim = inSyncSecondaries.get(rnd.nextInt(inSyncSecondaries.size()));
                what = "kill -9 of secondary n" + victim + " (primary n" + primary + ")";
                cluster.kill(victim);
                Thread.sleep(holdMs); // the fault's hold time: the scenario
                restart(victim);
            }
            case RESTART_ALL -> {
                what = "kill -9 of every node, then start every node";
                for (int k = 1; k <= NODES; k++) {
                    cluster.kill(k);
                }
                Thread.sleep(Math.min(holdMs, 1_000)); // every node down a while: the scenario
                for (int k = 1; k <= NODES; k++) {
                    cluster.start(k);
                }
                for (int k = 1; k <= NODES; k++) {
                    cluster.awaitNode(k, NodeState.UP, 120);
                }
            }
            case CUT_PRIMARY_MGMT -> {
                long hold = Math.max(holdMs, 2 * leaseMs + 1_000);
                what = "network cut primary n" + primary + " <-> management (" + subnet + ".1) for " + hold + " ms";
                network().blackhole(primary, subnet + ".1", true);
                try {
                    Thread.sleep(hold); // the fault's hold time: the scenario
                    st.splitBrain += checks.zombieProbe(s, before, primary, "while cut from the management plane");
                } finally {
                    network().blackhole(primary, subnet + ".1", false);
                }
            }
            case CUT_PRIMARY_SECONDARY -> {
                int other = inSyncSecondaries.get(rnd.nextInt(inSyncSecondaries.size()));
                what = "network cut primary n" + primary + " <-> secondary n" + other + " for " + holdMs + " ms";
                network().blackhole(primary, network().nodeAddress(other), true);
                network().blackhole(other, network().nodeAddress(primary), true);
                try {
                    Thread.sleep(holdMs); // the fault's hold time: the scenario
                } finally {
                    network().blackhole(primary, network().nodeAddress(other), false);
                    network().blackhole(other, network().nodeAddress(primary), false);
                }
            }
            case MGMT_LEADER_KILL -> {
                MgmtLeaderFault.Result r = MgmtLeaderFault.inject(plane, cluster.client(), "mgmtkill" + (++probeSerial),
                        holdMs);
                what = r.describe(plane.url(r.victim()));
                st.createMs.add(r.createMs());
                if (r.leader()) {
                    st.electMs.add(r.electMs());
                }
                if (!r.ok(r.leader())) {
                    st.unrecovered++;
                    faultOk = false;
                }
            }
            default -> throw new IllegalStateException(kind.toString());
        }
        long healNs = System.nanoTime();
        for (int k = 1; k <= NODES; k++) {
            cluster.awaitNode(k, NodeState.UP, 120);
        }
        boolean recovered = s.model.awaitAcksIssuedAfter(healNs, 20, recoverS, s);
        long pauseMs = TimeUnit.NANOSECONDS.toMillis(s.pause.close(System.nanoTime()));
        Volume after = cluster.client().getVolume(s.name);
        String lossReason = s.dev.lossReason();
        if (!recovered) {
            st.unrecovered++;
            faultOk = false;
        }
        boolean missedFailover = false;
        if (CampaignLoad.primaryOf(after) != primary) {
            st.failovers++;
        } else if (expectFailover && (kind == FaultKind.PRIMARY_KILL || kind == FaultKind.PRIMARY_STOP)) {
            st.missedFailovers++;
            missedFailover = true;
            faultOk = false;
        }
        boolean overPause = maxPauseMs > 0 && pauseMs > maxPauseMs;
        if (overPause) {
            st.overPause++;
            faultOk = false;
        }
        // read back every block: its last acknowledged value or a later one
        Check check = CampaignLoad.verify(s);
        st.lost += check.lost();
        st.corrupt += check.corrupt();
        long stale = s.model.stale.get() - stale0 + check.stale();
        st.stale += stale;
        st.corrupt += s.model.corrupt.get() - corrupt0;
        st.writeErrors += s.model.writesFailed.get() - errors0;
        st.splitBrain += checks.splitBrainEvidence(s);
        st.pausesMs.add(pauseMs);
        boolean ok = faultOk && check.clean() && stale == 0 && st.splitBrain == splitBefore
                && s.model.corrupt.get() == corrupt0;
        say(String.format("cycle %d %s [t=%ds]: %s; epoch %d -> %d, primary n%d -> %s, %s; pause %d ms; "
                        + "%d writes acked, %d failed; verify: %s%s%s", n, kind.label, elapsedS(), what,
                before.epoch(), after.epoch(), primary, after.nodeId(), after.state().toString().toLowerCase(), pauseMs,
                s.model.writesAcked.get() - acked0, s.model.writesFailed.get() - errors0, check,
                (recovered ? "" : "; NOT RECOVERED within " + recoverS + " s after the heal"
                        + (lossReason != null ? " (device lost: " + lossReason + ")" : ""))
                        + (overPause ? "; PAUSE over the bound of " + maxPauseMs + " ms" : "")
                        + (missedFailover ? "; NO FAILOVER: n" + primary + " is still primary" : ""),
                ok || s.model.problems(5).equals("[]") ? "" : "; problems: " + s.model.problems(5)));
        if (!recovered || lossReason != null) {
            retire("cycle " + n + " did not recover");
        }
        return ok;
    }

    private void restart(int k) throws Exception {
        cluster.start(k);
        cluster.awaitNode(k, NodeState.UP, 120);
    }


    // ---- volumes and load ------------------------------------------------------------------------------------

    /**
     * A volume with all three copies in sync, opened, under load. The current one is kept across cycles: a copy a
     * fault left stale or syncing is resynced from the primary while the load goes on (docs/resync.md), and the
     * next cycle starts once all three are in sync again, so later faults (a promotion of a resynced copy included)
     * run against the same acknowledged-write model. A volume whose copies are not all in sync within the resync
     * bound ({@code --recover-s}, at least 60 s), or whose device was lost, is read back, closed and deleted, and a
     * new one is made; such a resync timeout is counted and printed ({@code resync_timeouts}).
     */
    private void ensureSession() throws Exception {
        if (session != null) {
            Volume v = cluster.client().getVolume(session.name);
            boolean full = allInSync(v);
            if (!full && session.dev.lossReason() == null) {
                long t0 = System.nanoTime();
                try {
                    v = cluster.awaitVolume(session.name, FailoverCampaign::allInSync, (int) Math.max(60, recoverS),
                            "resynced, 3 in sync");
                    full = true;
                    long ms = (System.nanoTime() - t0) / 1_000_000;
                    resyncMs.add(ms);
                    say("  volume " + session.name + ": copies resynced, 3 in sync after " + ms + " ms (epoch "
                            + v.epoch() + ")");
                } catch (IllegalStateException e) {
                    resyncTimeouts++;
                    say("  volume " + session.name + ": RESYNC TIMEOUT: " + e.getMessage());
                }
            }
            if (full && session.dev.lossReason() == null) {
                return;
            }
            retire(full ? "its device was lost" : "it has " + v.inSyncCount() + " of " + NODES
                    + " copies in sync after the resync bound");
        }
        String name = "chaos" + (++volumeSerial);
        cluster.client().createVolume(CreateVolumeRequest.replicated(name, volumeBytes, NODES).withAnyHost());
        cluster.awaitVolume(name, v -> v.state() == VolumeState.READY && v.copies().size() == NODES
                && v.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC), 120, "ready, 3 in sync");
        BlockDevice dev = VolumeLocator.open(cluster.client(), name, null, deviceOptions());
        session = new CampaignLoad(cluster, name, dev, new AckedWriteModel(volumeBytes));
        session.start();
        if (snapshotEveryMs > 0) {
            CampaignLoad s = session;
            taker = new SnapshotTaker(snapshotClient, name, s.history, snapshotEveryMs, () -> s.stopping);
            s.startTaker(taker);
        }
    }

    private static boolean allInSync(Volume v) {
        return v.state() == VolumeState.READY && v.copies().size() == NODES
                && v.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC);
    }

    private static DeviceOptions deviceOptions() {
        return DeviceOptions.defaults().providerMode("soft").ioQueues(2).reconnectDelayMs(200)
                .commandTimeoutMs(10_000).ctrlLossTimeoutMs(30_000);
    }

    /**
     * Stops the load on the current volume, reads it back a last time (a new device if its own is lost), drops it (one
     * that took snapshots is kept for their check at the end).
     */
    private void retire(String why) {
        CampaignLoad s = session;
        SnapshotTaker tk = taker;
        session = null;
        taker = null;
        s.stop();
        if (tk != null) {
            audit.add(cluster.client(), s, tk); // the volume is kept: its snapshots are read from the copies at the end
        }
        String result;
        if (s.dev.lossReason() != null) {
            try {
                s.dev.close();
                s.dev = VolumeLocator.open(cluster.client(), s.name, null, deviceOptions());
            } catch (RuntimeException e) {
                say("  volume " + s.name + " retired (" + why + "): cannot reopen it for the last read-back: " + e);
                return;
            }
        }
        Check c = CampaignLoad.verify(s);
        Stats any = stats.values().iterator().next();
        FaultKind last = s.lastKind;
        Stats st = last != null ? stats.get(last) : any;
        st.lost += c.lost();
        st.corrupt += c.corrupt();
        st.stale += c.stale();
        result = c.toString();
        s.dev.close();
        if (tk == null) {
            try {
                cluster.client().deleteVolume(s.name, true);
            } catch (RuntimeException e) {
                // room is ample; a volume left behind is harmless
            }
        }
        say("  volume " + s.name + " retired (" + why + "): " + s.model.writesAcked.get() + " writes acked in all, "
                + "last read-back: " + result);
    }

}
