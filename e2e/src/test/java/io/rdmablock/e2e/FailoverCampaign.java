package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeState;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 * {@code --expect-failover true} (primary-kill, primary-stop and cut-primary-mgmt must end with another primary),
 * {@code --netns PREFIX
 * --subnet A.B.C} (network namespaces {@code PREFIX-n1..3} at {@code A.B.C.11..13}, management at {@code A.B.C.1}),
 * {@code --no-netns-reason TEXT} (why there are none: the network kinds are skipped with it).
 */
public final class FailoverCampaign {
    static final int BLOCK = 4096;
    private static final long MAGIC = 0x52424348414f5331L; // "RBCHAOS1"
    private static final int NODES = 3;
    private static final Pattern SERVED_AS_PRIMARY =
            Pattern.compile("served as primary: id=\\S+, name=([^,\\s]+), epoch=(\\d+)");

    enum Kind {
        PRIMARY_KILL("primary-kill", false), PRIMARY_STOP("primary-stop", false),
        SECONDARY_KILL("secondary-kill", false), RESTART_ALL("restart-all", false),
        CUT_PRIMARY_MGMT("cut-primary-mgmt", true), CUT_PRIMARY_SECONDARY("cut-primary-secondary", true);

        final String label;
        final boolean network;

        Kind(String label, boolean network) {
            this.label = label;
            this.network = network;
        }

        static Kind of(String s) {
            for (Kind k : values()) {
                if (k.label.equals(s.trim())) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown kind '" + s + "'; kinds: "
                    + Arrays.stream(values()).map(k -> k.label).toList());
        }
    }

    /** Per fault kind: what the cycles of that kind saw. */
    static final class Stats {
        int cycles;
        final List<Long> pausesMs = new ArrayList<>();
        long lost;
        long stale;
        long corrupt;
        long splitBrain;
        int unrecovered;
        int overPause;
        /** Cycles after which another node was primary (a promotion happened). */
        int failovers;
        /** Cycles that should have promoted another node ({@code --expect-failover}) and did not. */
        int missedFailovers;
        long writeErrors;
    }

    // ---- options ---------------------------------------------------------------------------------------------
    private final Path dir;
    private int cycles;
    private final List<Kind> kinds = new ArrayList<>();
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

    // ---- state -----------------------------------------------------------------------------------------------
    private NodeCluster cluster;
    private final Map<Kind, Stats> stats = new EnumMap<>(Kind.class);
    private final Random rnd = new Random(12);
    private Session session;
    private int volumeSerial;
    /** Split-brain evidence already counted (so a later cycle does not count it again). */
    private final Set<String> splitSeen = ConcurrentHashMap.newKeySet();
    private final long startNs = System.nanoTime();

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
        String kinds = opt.remove("kinds");
        if (kinds == null || kinds.isBlank() || kinds.equals("all")) {
            c.kinds.addAll(List.of(Kind.values()));
        } else {
            for (String k : kinds.split(",")) {
                Kind kind = Kind.of(k);
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
        c.netns = opt.remove("netns");
        c.subnet = opt.remove("subnet");
        if (opt.containsKey("no-netns-reason")) {
            c.noNetnsReason = opt.remove("no-netns-reason");
        }
        if (!opt.isEmpty()) {
            usage("unknown options " + opt.keySet());
        }
        if (c.cycles < 1 || c.cycles > 10_000 || c.holdMs < 100 || c.holdMs > 600_000 || c.recoverS < 5
                || c.maxS < 30) {
            usage("out of bounds: cycles 1..10000, seconds-per-cycle 0.1..600, recover-s >= 5, max-s >= 30");
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
                + "[--replica-timeout-ms MS] [--expect-failover true] "
                + "[--netns P --subnet A.B.C] [--no-netns-reason TEXT]");
        System.exit(2);
    }

    private static void say(String s) {
        System.out.println(s);
        System.out.flush();
    }

    private long elapsedS() {
        return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNs);
    }

    // ---- the run ---------------------------------------------------------------------------------------------

    private int run() throws Exception {
        List<Kind> runnable = new ArrayList<>();
        for (Kind k : kinds) {
            if (k.network && netns == null) {
                say("failover-campaign: kind " + k.label + " skipped: " + noNetnsReason);
            } else {
                runnable.add(k);
            }
        }
        if (runnable.isEmpty()) {
            say("failover-campaign: no kind can run here");
            return 1;
        }
        for (Kind k : runnable) {
            stats.put(k, new Stats());
        }
        NodeCluster.Placement placement = netns == null ? NodeCluster.Placement.loopback() : netnsPlacement();
        say("failover-campaign: " + cycles + " cycles of " + runnable.stream().map(k -> k.label).toList()
                + ", fault held " + holdMs + " ms, replica timeout " + replicaTimeoutMs + " ms, recovery bound "
                + recoverS + " s, run bound " + maxS + " s, "
                + (netns == null ? "loopback" : "network namespaces " + netns + "-n1..3 on " + subnet + ".0/24")
                + ", data in " + dir);
        Files.createDirectories(dir);
        boolean failed = false;
        int done = 0;
        cluster = new NodeCluster(dir, NODES, "soft",
                List.of("--replica-timeout-ms", Long.toString(replicaTimeoutMs)), placement,
                leaseMs + 1_000);
        try {
            for (int i = 0; i < cycles; i++) {
                Kind kind = runnable.get(i % runnable.size());
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
        } finally {
            if (session != null) {
                session.stop();
            }
            cluster.close();
        }
        return report(done) || failed ? 1 : 0;
    }

    private long estimateS(Kind kind) {
        long hold = kind == Kind.PRIMARY_STOP || kind == Kind.CUT_PRIMARY_MGMT
                ? Math.max(holdMs, 2 * leaseMs + 1_000) : holdMs;
        return TimeUnit.MILLISECONDS.toSeconds(hold) + 25; // + new volume, warm-up, restart, verification
    }

    /** Prints one row per kind and the last line; true when anything failed. */
    private boolean report(int done) {
        long lost = 0, stale = 0, split = 0, corrupt = 0, pauseMax = 0;
        int unrecovered = 0, overPause = 0, missed = 0;
        for (Map.Entry<Kind, Stats> e : stats.entrySet()) {
            Stats s = e.getValue();
            List<Long> p = new ArrayList<>(s.pausesMs);
            p.sort(null);
            long p50 = p.isEmpty() ? 0 : p.get((p.size() - 1) / 2);
            long max = p.isEmpty() ? 0 : p.get(p.size() - 1);
            say(String.format("failover-campaign: kind=%s cycles=%d pause_p50_ms=%d pause_max_ms=%d lost=%d "
                            + "stale_reads=%d split_brain=%d corrupt=%d unrecovered=%d over_pause=%d failovers=%d "
                            + "missed_failovers=%d write_errors=%d", e.getKey().label, s.cycles, p50, max, s.lost,
                    s.stale, s.splitBrain, s.corrupt, s.unrecovered, s.overPause, s.failovers, s.missedFailovers,
                    s.writeErrors));
            lost += s.lost;
            stale += s.stale;
            split += s.splitBrain;
            corrupt += s.corrupt;
            unrecovered += s.unrecovered;
            overPause += s.overPause;
            missed += s.missedFailovers;
            pauseMax = Math.max(pauseMax, max);
        }
        say(String.format("failover-campaign: cycles=%d lost=%d stale_reads=%d split_brain=%d pause_max_ms=%d",
                done, lost, stale, split, pauseMax));
        return lost > 0 || stale > 0 || split > 0 || corrupt > 0 || unrecovered > 0 || overPause > 0 || missed > 0
                || done == 0;
    }

    /** Node k in namespace PREFIX-nk at A.B.C.(10+k):4420; the management server at A.B.C.1 (the bridge). */
    private NodeCluster.Placement netnsPlacement() {
        return new NodeCluster.Placement() {
            public String mgmtHost() {
                return subnet + ".1";
            }

            public String nodeHost(int k) {
                return nodeAddress(k);
            }

            public int nodePort(int k) {
                return 4420; // each namespace has its own address: a fixed port survives a restart
            }

            public List<String> launchPrefix(int k) {
                return List.of("ip", "netns", "exec", ns(k));
            }
        };
    }

    private String ns(int k) {
        return netns + "-n" + k;
    }

    private String nodeAddress(int k) {
        return subnet + "." + (10 + k);
    }

    // ---- one cycle -------------------------------------------------------------------------------------------

    private boolean cycle(int n, Kind kind) throws Exception {
        Stats st = stats.get(kind);
        st.cycles++;
        ensureSession();
        Session s = session;
        Volume before = cluster.client().getVolume(s.name);
        int primary = primaryOf(before);
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
                Thread.sleep(holdMs);
                restart(primary);
            }
            case PRIMARY_STOP -> {
                long hold = Math.max(holdMs, 2 * leaseMs + 1_000);
                what = "SIGSTOP of primary n" + primary + " for " + hold + " ms (lease " + leaseMs + " ms), SIGCONT";
                cluster.signal(primary, "STOP");
                try {
                    Thread.sleep(hold);
                } finally {
                    cluster.signal(primary, "CONT");
                }
                st.splitBrain += zombieProbe(s, before, primary, "after SIGCONT");
            }
            case SECONDARY_KILL -> {
                int victim = inSyncSecondaries.get(rnd.nextInt(inSyncSecondaries.size()));
                what = "kill -9 of secondary n" + victim + " (primary n" + primary + ")";
                cluster.kill(victim);
                Thread.sleep(holdMs);
                restart(victim);
            }
            case RESTART_ALL -> {
                what = "kill -9 of every node, then start every node";
                for (int k = 1; k <= NODES; k++) {
                    cluster.kill(k);
                }
                Thread.sleep(Math.min(holdMs, 1_000));
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
                blackhole(primary, subnet + ".1", true);
                try {
                    Thread.sleep(hold);
                    st.splitBrain += zombieProbe(s, before, primary, "while cut from the management plane");
                } finally {
                    blackhole(primary, subnet + ".1", false);
                }
            }
            case CUT_PRIMARY_SECONDARY -> {
                int other = inSyncSecondaries.get(rnd.nextInt(inSyncSecondaries.size()));
                what = "network cut primary n" + primary + " <-> secondary n" + other + " for " + holdMs + " ms";
                blackhole(primary, nodeAddress(other), true);
                blackhole(other, nodeAddress(primary), true);
                try {
                    Thread.sleep(holdMs);
                } finally {
                    blackhole(primary, nodeAddress(other), false);
                    blackhole(other, nodeAddress(primary), false);
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
        if (primaryOf(after) != primary) {
            st.failovers++;
        } else if (expectFailover && (kind == Kind.PRIMARY_KILL || kind == Kind.PRIMARY_STOP
                || kind == Kind.CUT_PRIMARY_MGMT)) {
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
        Check check = verify(s);
        st.lost += check.lost;
        st.corrupt += check.corrupt;
        long stale = s.model.stale.get() - stale0 + check.stale;
        st.stale += stale;
        st.corrupt += s.model.corrupt.get() - corrupt0;
        st.writeErrors += s.model.writesFailed.get() - errors0;
        st.splitBrain += splitBrainEvidence(s);
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

    /** Adds (or removes) a blackhole route to {@code address} inside node {@code k}'s namespace. */
    private void blackhole(int k, String address, boolean add) throws IOException, InterruptedException {
        List<String> cmd = List.of("ip", "netns", "exec", ns(k), "ip", "route", add ? "add" : "del", "blackhole",
                address + "/32");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
        }
    }

    /**
     * After a promotion (the record names another primary at a higher epoch), writes one probe block straight to
     * the old primary (a connection of its own, single path). If the old primary acknowledges it, two nodes
     * acknowledged writes for the volume after the takeover: 1 (split brain), else 0. No promotion: nothing to probe.
     */
    private int zombieProbe(Session s, Volume before, int oldPrimary, String when) {
        Volume now = cluster.client().getVolume(s.name);
        if (now.epoch() <= before.epoch() || primaryOf(now) == oldPrimary) {
            say("  zombie probe " + when + ": skipped, no promotion (epoch " + now.epoch() + ", primary "
                    + now.nodeId() + ")");
            return 0;
        }
        String address = before.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY).findFirst()
                .map(VolumeCopy::fabricAddress).orElse(before.fabricAddress());
        DeviceOptions o = DeviceOptions.defaults().providerMode("soft").ioQueues(1).connectTimeoutMs(3_000)
                .commandTimeoutMs(3_000).reconnectDelayMs(500).ctrlLossTimeoutMs(5_000);
        CompletableFuture<String> probe = CompletableFuture.supplyAsync(() -> {
            try (NvmeBlockDevice d = NvmeBlockDevice.open(VolumeLocator.parseAddress(address), before.subnqn(),
                    null, o)) {
                MemorySegment buf = d.allocateBuffer(BLOCK);
                encode(buf, 0, s.model.probeBlock, 99, System.nanoTime());
                d.writeSync(s.model.probeBlock * BLOCK, buf, false);
                return "acknowledged";
            } catch (RuntimeException e) {
                return "refused (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")";
            }
        });
        String result;
        try {
            result = probe.get(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            result = "no answer within 20 s";
        }
        say("  zombie probe " + when + ": write to old primary n" + oldPrimary + " at " + address + " (epoch "
                + before.epoch() + "; now n" + primaryOf(now) + " at epoch " + now.epoch() + "): " + result);
        return result.equals("acknowledged") ? 1 : 0;
    }

    /**
     * Split brain as far as it is observable from outside the nodes: (1) the management record showed two
     * different primaries at one epoch (polled every 200 ms); (2) two nodes' logs say they served the volume as
     * primary at the same epoch ("replicated volume served as primary: ..., epoch=E"). Counts new evidence only.
     */
    private int splitBrainEvidence(Session s) {
        int found = 0;
        for (Map.Entry<Long, Set<String>> e : s.primariesByEpoch.entrySet()) {
            if (e.getValue().size() > 1 && splitSeen.add("record " + s.name + " " + e.getKey())) {
                say("  split brain: the management record named primaries " + e.getValue() + " at epoch "
                        + e.getKey() + " of " + s.name);
                found++;
            }
        }
        Map<String, Set<Integer>> servedBy = new HashMap<>();
        for (int k = 1; k <= NODES; k++) {
            Matcher m = SERVED_AS_PRIMARY.matcher(cluster.log(k));
            while (m.find()) {
                if (m.group(1).equals(s.name)) {
                    servedBy.computeIfAbsent(m.group(2), x -> new TreeSet<>()).add(k);
                }
            }
        }
        for (Map.Entry<String, Set<Integer>> e : servedBy.entrySet()) {
            if (e.getValue().size() > 1 && splitSeen.add("logs " + s.name + " " + e.getKey())) {
                say("  split brain: nodes " + e.getValue() + " each logged serving " + s.name + " as primary at epoch "
                        + e.getKey());
                found++;
            }
        }
        return found;
    }

    private static int primaryOf(Volume v) {
        return NodeCluster.index(v.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY).findFirst()
                .map(VolumeCopy::nodeId).orElse(v.nodeId()));
    }

    // ---- volumes and load ------------------------------------------------------------------------------------

    /**
     * A volume with all three copies in sync, opened, under load. The current one is kept while it still has
     * three in-sync copies; one that lost a copy is read back, closed and deleted, and a new one is made (a stale
     * copy is not resynced yet, docs/replication.md: a second fault would otherwise run on fewer copies).
     */
    private void ensureSession() throws Exception {
        if (session != null) {
            Volume v = cluster.client().getVolume(session.name);
            boolean full = v.state() == VolumeState.READY && v.copies().size() == NODES
                    && v.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC);
            if (full && session.dev.lossReason() == null) {
                return;
            }
            retire(full ? "its device was lost" : "it has " + v.inSyncCount() + " of " + NODES
                    + " copies in sync (no resync yet)");
        }
        String name = "chaos" + (++volumeSerial);
        cluster.client().createVolume(CreateVolumeRequest.replicated(name, volumeBytes, NODES));
        cluster.awaitVolume(name, v -> v.state() == VolumeState.READY && v.copies().size() == NODES
                && v.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC), 120, "ready, 3 in sync");
        BlockDevice dev = VolumeLocator.open(cluster.client(), name, null, deviceOptions());
        session = new Session(name, dev, new Model(volumeBytes));
        session.start();
    }

    private static DeviceOptions deviceOptions() {
        return DeviceOptions.defaults().providerMode("soft").ioQueues(2).reconnectDelayMs(200)
                .commandTimeoutMs(10_000).ctrlLossTimeoutMs(30_000);
    }

    /** Stops the load on the current volume, reads it back a last time (a new device if its own is lost), drops it. */
    private void retire(String why) {
        Session s = session;
        session = null;
        s.stop();
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
        Check c = verify(s);
        Stats any = stats.values().iterator().next();
        Kind last = s.lastKind;
        Stats st = last != null ? stats.get(last) : any;
        st.lost += c.lost;
        st.corrupt += c.corrupt;
        st.stale += c.stale;
        result = c.toString();
        s.dev.close();
        try {
            cluster.client().deleteVolume(s.name, true);
        } catch (RuntimeException e) {
            // room is ample; a volume left behind is harmless
        }
        say("  volume " + s.name + " retired (" + why + "): " + s.model.writesAcked.get() + " writes acked in all, "
                + "last read-back: " + result);
    }

    final class Session {
        final String name;
        volatile BlockDevice dev;
        final Model model;
        final Pause pause = new Pause();
        final Map<Long, Set<String>> primariesByEpoch = new ConcurrentHashMap<>();
        final List<Thread> threads = new ArrayList<>();
        volatile boolean stopping;
        Kind lastKind;

        Session(String name, BlockDevice dev, Model model) {
            this.name = name;
            this.dev = dev;
            this.model = model;
        }

        void start() {
            for (int lane = 0; lane < Model.LANES; lane++) {
                int l = lane;
                threads.add(Thread.ofPlatform().name("chaos-writer-" + l).daemon().start(() -> writer(l)));
            }
            for (int r = 0; r < 2; r++) {
                int rr = r;
                threads.add(Thread.ofPlatform().name("chaos-reader-" + r).daemon().start(() -> reader(rr)));
            }
            threads.add(Thread.ofPlatform().name("chaos-record").daemon().start(this::watchRecord));
        }

        void stop() {
            stopping = true;
            for (Thread t : threads) {
                try {
                    t.join(60_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private void watchRecord() {
            while (!stopping) {
                try {
                    Volume v = cluster.client().getVolume(name);
                    primariesByEpoch.computeIfAbsent(v.epoch(), e -> ConcurrentHashMap.newKeySet())
                            .add(Integer.toString(primaryOf(v)));
                } catch (RuntimeException e) {
                    // the record is read again in 200 ms
                }
                sleep(200);
            }
        }

        private void writer(int lane) {
            Random r = new Random(1000 + lane);
            BlockDevice d = dev;
            MemorySegment buf = d.allocateBuffer(4L * BLOCK);
            long seq = 0;
            while (!stopping) {
                if (d != dev) { // reopened
                    d = dev;
                    buf = d.allocateBuffer(4L * BLOCK);
                }
                int n = 1 + r.nextInt(4);
                long first = (long) lane * model.perLane + r.nextInt(model.perLane - n + 1);
                seq++;
                for (int b = 0; b < n; b++) {
                    model.issued.accumulateAndGet((int) (first + b), seq, Math::max);
                    encode(buf, (long) b * BLOCK, first + b, lane, seq);
                }
                long t0 = System.nanoTime();
                try {
                    d.write(first * BLOCK, buf.asSlice(0, (long) n * BLOCK), false).get(40, TimeUnit.SECONDS);
                    long now = System.nanoTime();
                    for (int b = 0; b < n; b++) {
                        model.acked.set((int) (first + b), seq);
                        model.ackedAt.set((int) (first + b), now);
                    }
                    model.writesAcked.incrementAndGet();
                    model.noteAck(t0);
                    pause.complete(now);
                } catch (TimeoutException e) {
                    model.writeFailed("write of blocks " + first + "+" + n + " outstanding for 40 s");
                    buf = d.allocateBuffer(4L * BLOCK); // the node may still touch the old buffer: never reuse it
                } catch (ExecutionException | RuntimeException e) {
                    model.writeFailed("write of blocks " + first + "+" + n + ": " + rootMessage(e));
                    sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private void reader(int id) {
            Random r = new Random(2000 + id);
            BlockDevice d = dev;
            MemorySegment buf = d.allocateBuffer(4L * BLOCK);
            long[] ackedBefore = new long[4];
            long[] seenBefore = new long[4];
            while (!stopping) {
                if (d != dev) {
                    d = dev;
                    buf = d.allocateBuffer(4L * BLOCK);
                }
                int n = 1 + r.nextInt(4);
                long first = r.nextInt(model.blocks - n + 1);
                for (int b = 0; b < n; b++) {
                    ackedBefore[b] = model.acked.get((int) (first + b));
                    seenBefore[b] = model.observed.get((int) (first + b));
                }
                try {
                    d.read(first * BLOCK, buf.asSlice(0, (long) n * BLOCK)).get(40, TimeUnit.SECONDS);
                    pause.complete(System.nanoTime());
                    for (int b = 0; b < n; b++) {
                        model.checkRead(buf, (long) b * BLOCK, first + b, ackedBefore[b], seenBefore[b], "read");
                    }
                } catch (TimeoutException e) {
                    buf = d.allocateBuffer(4L * BLOCK);
                } catch (ExecutionException | RuntimeException e) {
                    sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    record Check(long blocks, long lost, long stale, long corrupt, String first, String error) {
        boolean clean() {
            return lost == 0 && stale == 0 && corrupt == 0 && error == null;
        }

        @Override
        public String toString() {
            if (error != null) {
                return "read-back failed: " + error;
            }
            return clean() ? blocks + " blocks, each its last acknowledged value or later"
                    : blocks + " blocks, lost " + lost + ", stale " + stale + ", corrupt " + corrupt + " (first: "
                    + first + ")";
        }
    }

    /** Reads every block of the load's regions (64 at a time, each read bounded and retried) against the model. */
    private static Check verify(Session s) {
        Model m = s.model;
        BlockDevice d = s.dev;
        MemorySegment buf = d.allocateBuffer(64L * BLOCK);
        long lost = 0, stale = 0, corrupt = 0;
        String first = null;
        long[] acked = new long[64];
        long[] seen = new long[64];
        for (int b = 0; b < m.blocks; b += 64) {
            int n = Math.min(64, m.blocks - b);
            boolean read = false;
            String error = null;
            for (int attempt = 0; attempt < 3 && !read; attempt++) {
                for (int i = 0; i < n; i++) {
                    acked[i] = m.acked.get(b + i);
                    seen[i] = m.observed.get(b + i);
                }
                try {
                    d.read((long) b * BLOCK, buf.asSlice(0, (long) n * BLOCK)).get(30, TimeUnit.SECONDS);
                    read = true;
                } catch (TimeoutException e) {
                    buf = d.allocateBuffer(64L * BLOCK);
                    error = "read of blocks " + b + "+" + n + " outstanding for 30 s";
                } catch (Exception e) {
                    error = "read of blocks " + b + "+" + n + ": " + rootMessage(e);
                    sleep(500);
                }
            }
            if (!read) {
                return new Check(b, lost, stale, corrupt, first, error);
            }
            for (int i = 0; i < n; i++) {
                String p = m.checkRead(buf, (long) i * BLOCK, b + i, acked[i], seen[i], "read-back");
                if (p != null) {
                    if (p.startsWith("lost")) {
                        lost++;
                    } else if (p.startsWith("stale")) {
                        stale++;
                    } else {
                        corrupt++;
                    }
                    if (first == null) {
                        first = p;
                    }
                }
            }
        }
        return new Check(m.blocks, lost, stale, corrupt, first, null);
    }

    // ---- the model -------------------------------------------------------------------------------------------

    /**
     * Acknowledged writes per block. {@code LANES} writers each own a disjoint region (so one write at a time per
     * block, and a block's sequence numbers only grow), writing 1..4 blocks at a time; every block carries magic,
     * block number, writer, sequence and a checksum over the rest of its 4 KiB. Per block: the sequence of the last
     * acknowledged write and when it was acknowledged ({@code acked}, {@code ackedAt}; recorded once the write's
     * future completed), the highest sequence issued ({@code issued}), the highest one a completed read returned
     * ({@code observed}). Rules, for a read that began after the values were sampled: sequence >= the acknowledged
     * one (else a stale read, or in a read-back after a heal a lost write); >= the observed one (reads never go back
     * in time); <= the issued one and a good checksum (else corrupt).
     */
    static final class Model {
        static final int LANES = 4;
        final int perLane;
        final int blocks;
        final long probeBlock;
        final AtomicLongArray acked;
        final AtomicLongArray ackedAt;
        final AtomicLongArray issued;
        final AtomicLongArray observed;
        final AtomicLong writesAcked = new AtomicLong();
        final AtomicLong writesFailed = new AtomicLong();
        final AtomicLong stale = new AtomicLong();
        final AtomicLong corrupt = new AtomicLong();
        private final Set<String> problems = java.util.Collections.synchronizedSet(new LinkedHashSet<>());
        private volatile long healNs = Long.MAX_VALUE;
        private final AtomicLong acksAfterHeal = new AtomicLong();

        Model(long volumeBytes) {
            int volumeBlocks = (int) (volumeBytes / BLOCK);
            this.perLane = (volumeBlocks - 16) / LANES;
            this.blocks = perLane * LANES;
            this.probeBlock = volumeBlocks - 1; // outside every lane: the zombie probe's
            this.acked = new AtomicLongArray(blocks);
            this.ackedAt = new AtomicLongArray(blocks);
            this.issued = new AtomicLongArray(blocks);
            this.observed = new AtomicLongArray(blocks);
        }

        void noteAck(long issuedNs) {
            if (issuedNs > healNs) {
                acksAfterHeal.incrementAndGet();
            }
        }

        void writeFailed(String why) {
            writesFailed.incrementAndGet();
            note(why);
        }

        private void note(String p) {
            if (problems.size() < 50) {
                problems.add(p);
            }
        }

        String problems(int max) {
            synchronized (problems) {
                return problems.stream().limit(max).toList().toString();
            }
        }

        void awaitProgress(long acks, long seconds) {
            long target = writesAcked.get() + acks;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (writesAcked.get() < target && System.nanoTime() < deadline) {
                sleep(20);
            }
        }

        /** Waits (bounded) for {@code acks} writes issued after {@code heal} to be acknowledged; true if they were. */
        boolean awaitAcksIssuedAfter(long heal, long acks, long seconds, Session s) {
            acksAfterHeal.set(0);
            healNs = heal;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            try {
                while (System.nanoTime() < deadline) {
                    if (acksAfterHeal.get() >= acks) {
                        return true;
                    }
                    if (s.dev.lossReason() != null) {
                        return false; // single path: nothing brings it back
                    }
                    sleep(20);
                }
                return false;
            } finally {
                healNs = Long.MAX_VALUE;
            }
        }

        /** Checks one block read into {@code buf} at {@code off}; returns the problem (also counted) or null. */
        String checkRead(MemorySegment buf, long off, long block, long ackedBefore, long seenBefore, String what) {
            int b = (int) block;
            long seq = decode(buf, off, block);
            String p = null;
            if (seq < 0) {
                p = "corrupt: " + what + " of block " + block + ": bad stamp or checksum (word0 "
                        + Long.toHexString(buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off)) + ")";
            } else if (seq > issued.get(b)) {
                p = "corrupt: " + what + " of block " + block + " returned sequence " + seq + ", never written (issued "
                        + issued.get(b) + ")";
            } else if (seq < ackedBefore) {
                p = (what.equals("read-back") ? "lost: " : "stale: ") + what + " of block " + block + " returned "
                        + "sequence " + seq + ", but " + ackedBefore + " was acknowledged before the read began ("
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ackedAt.get(b)) + " ms before now)";
            } else if (seq < seenBefore) {
                p = "stale: " + what + " of block " + block + " went back in time: sequence " + seq + " after a "
                        + "completed read returned " + seenBefore;
            }
            if (p != null) {
                note(p);
                if (!what.equals("read-back")) {
                    if (p.startsWith("corrupt")) {
                        corrupt.incrementAndGet();
                    } else {
                        stale.incrementAndGet();
                    }
                }
                return p;
            }
            observed.accumulateAndGet(b, seq, Math::max);
            return null;
        }
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Writes block {@code block}'s stamp for (lane, seq) at {@code off}: magic, block, lane, seq, checksum, filler. */
    static void encode(MemorySegment buf, long off, long block, long lane, long seq) {
        long words = BLOCK / 8;
        long sum = mix(MAGIC ^ block) ^ mix(lane + 31 * seq);
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off, MAGIC);
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + 8, block);
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + 16, lane);
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + 24, seq);
        long seed = mix(block * 0x9E3779B97F4A7C15L + seq);
        for (long w = 5; w < words; w++) {
            long v = seed + w * 0x9E3779B97F4A7C15L;
            buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + w * 8, v);
            sum = sum * 31 + v;
        }
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + 32, sum);
    }

    /** The sequence a block holds: 0 when all zero (never written), -1 when its stamp or checksum is wrong. */
    static long decode(MemorySegment buf, long off, long block) {
        long words = BLOCK / 8;
        long magic = buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
        if (magic == 0) {
            for (long w = 1; w < words; w++) {
                if (buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + w * 8) != 0) {
                    return -1;
                }
            }
            return 0;
        }
        long b = buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + 8);
        long lane = buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + 16);
        long seq = buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + 24);
        if (magic != MAGIC || b != block || seq <= 0) {
            return -1;
        }
        long sum = mix(MAGIC ^ block) ^ mix(lane + 31 * seq);
        for (long w = 5; w < words; w++) {
            sum = sum * 31 + buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + w * 8);
        }
        return sum == buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + 32) ? seq : -1;
    }

    /** Longest gap between two completed I/Os from {@link #open} to {@link #close}. */
    static final class Pause {
        private long last;
        private long maxGap;
        private boolean open;

        synchronized void open(long t0) {
            last = t0;
            maxGap = 0;
            open = true;
        }

        synchronized void complete(long now) {
            if (now > last) {
                if (open) {
                    maxGap = Math.max(maxGap, now - last);
                }
                last = now;
            }
        }

        /** The longest gap, counting the one still open at {@code now} (no completion since the last one). */
        synchronized long close(long now) {
            open = false;
            return Math.max(maxGap, now - last);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String rootMessage(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
