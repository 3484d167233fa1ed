package io.rdmablock.e2e;

import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.rdmablock.e2e.BlockStamps.BLOCK;
import static io.rdmablock.e2e.BlockStamps.encode;
import static io.rdmablock.e2e.FailoverCampaign.say;

/** Split-brain evidence for {@link FailoverCampaign}: the zombie probe and the record/log checks; counts new only. */
final class SplitBrainChecks {
    private static final Pattern SERVED_AS_PRIMARY =
            Pattern.compile("served as primary: id=\\S+, name=([^,\\s]+), epoch=(\\d+)");

    private final NodeCluster cluster;
    private final int nodes;
    /** Split-brain evidence already counted (so a later cycle does not count it again). */
    private final Set<String> splitSeen = ConcurrentHashMap.newKeySet();

    SplitBrainChecks(NodeCluster cluster, int nodes) {
        this.cluster = cluster;
        this.nodes = nodes;
    }

    /**
     * After a promotion (the record names another primary at a higher epoch), writes one probe block straight to
     * the old primary (a connection of its own, single path). If the old primary acknowledges it, two nodes
     * acknowledged writes for the volume after the takeover: 1 (split brain), else 0. No promotion: nothing to probe.
     */
    int zombieProbe(CampaignLoad s, Volume before, int oldPrimary, String when) {
        Volume now = cluster.client().getVolume(s.name);
        if (now.epoch() <= before.epoch() || CampaignLoad.primaryOf(now) == oldPrimary) {
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
                + before.epoch() + "; now n" + CampaignLoad.primaryOf(now) + " at epoch " + now.epoch() + "): " + result);
        return result.equals("acknowledged") ? 1 : 0;
    }

    /**
     * Split brain as far as it is observable from outside the nodes: (1) the management record showed two
     * different primaries at one epoch (polled every 200 ms); (2) two nodes' logs say they served the volume as
     * primary at the same epoch ("replicated volume served as primary: ..., epoch=E"). Counts new evidence only.
     */
    int splitBrainEvidence(CampaignLoad s) {
        int found = 0;
        for (Map.Entry<Long, Set<String>> e : s.primariesByEpoch.entrySet()) {
            if (e.getValue().size() > 1 && splitSeen.add("record " + s.name + " " + e.getKey())) {
                say("  split brain: the management record named primaries " + e.getValue() + " at epoch "
                        + e.getKey() + " of " + s.name);
                found++;
            }
        }
        Map<String, Set<Integer>> servedBy = new HashMap<>();
        for (int k = 1; k <= nodes; k++) {
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
}
