package io.rdmablock.e2e;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What {@link FailoverCampaign} counts per fault kind ({@link Stats}) and the summary it prints at the end. */
final class CampaignReport {
    private CampaignReport() {
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
        /** mgmt-leader-kill: per cycle, kill to a create answered through the URL list, ms (-1: none in bound). */
        final List<Long> createMs = new ArrayList<>();
        /** mgmt-leader-kill: per cycle, kill to another leader named by {@code /v1/leader}, ms (-1: none). */
        final List<Long> electMs = new ArrayList<>();
    }

    /** @return {@code " name_max=X name_all=[..]"} for a non-empty list, else "" */
    static String figures(String name, List<Long> ms) {
        if (ms.isEmpty()) {
            return "";
        }
        return " " + name + "_max=" + ms.stream().mapToLong(Long::longValue).max().orElse(0) + " " + name + "_all="
                + ms.toString().replace(" ", "");
    }


    /** Prints one row per kind and the last line (ending with {@code extra}); true when anything failed. */
    static boolean print(Map<FaultKind, Stats> stats, int done, String extra) {
        long lost = 0, stale = 0, split = 0, corrupt = 0, pauseMax = 0;
        int unrecovered = 0, overPause = 0, missed = 0;
        for (Map.Entry<FaultKind, Stats> e : stats.entrySet()) {
            Stats s = e.getValue();
            List<Long> p = new ArrayList<>(s.pausesMs);
            p.sort(null);
            long p50 = p.isEmpty() ? 0 : p.get((p.size() - 1) / 2);
            long max = p.isEmpty() ? 0 : p.get(p.size() - 1);
            FailoverCampaign.say(String.format("failover-campaign: kind=%s cycles=%d pause_p50_ms=%d pause_max_ms=%d lost=%d "
                            + "stale_reads=%d split_brain=%d corrupt=%d unrecovered=%d over_pause=%d failovers=%d "
                            + "missed_failovers=%d write_errors=%d", e.getKey().label, s.cycles, p50, max, s.lost,
                    s.stale, s.splitBrain, s.corrupt, s.unrecovered, s.overPause, s.failovers, s.missedFailovers,
                    s.writeErrors) + figures("create_ms", s.createMs) + figures("elect_ms", s.electMs));
            lost += s.lost;
            stale += s.stale;
            split += s.splitBrain;
            corrupt += s.corrupt;
            unrecovered += s.unrecovered;
            overPause += s.overPause;
            missed += s.missedFailovers;
            pauseMax = Math.max(pauseMax, max);
        }
        FailoverCampaign.say(String.format("failover-campaign: cycles=%d lost=%d stale_reads=%d split_brain=%d pause_max_ms=%d",
                done, lost, stale, split, pauseMax) + extra);
        return lost > 0 || stale > 0 || split > 0 || corrupt > 0 || unrecovered > 0 || overPause > 0 || missed > 0
                || done == 0;
    }
}
