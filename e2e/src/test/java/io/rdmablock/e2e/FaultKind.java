package io.rdmablock.e2e;

import java.util.Arrays;
import java.util.List;

/**
 * The faults {@link FailoverCampaign} injects, one per cycle; {@code network} kinds need network namespaces,
 * {@code mgmtPlane} kinds a highly available management plane ({@code --etcd E --mgmt M}, {@link CampaignMgmtPlane}).
 */
enum FaultKind {
    PRIMARY_KILL("primary-kill", false, false), PRIMARY_STOP("primary-stop", false, false),
    SECONDARY_KILL("secondary-kill", false, false), RESTART_ALL("restart-all", false, false),
    CUT_PRIMARY_MGMT("cut-primary-mgmt", true, false), CUT_PRIMARY_SECONDARY("cut-primary-secondary", true, false),
    /** kill -9 of the leader management server (opt-in: only with {@code --etcd E --mgmt M}). */
    MGMT_LEADER_KILL("mgmt-leader-kill", false, true);

    final String label;
    final boolean network;
    final boolean mgmtPlane;

    FaultKind(String label, boolean network, boolean mgmtPlane) {
        this.label = label;
        this.network = network;
        this.mgmtPlane = mgmtPlane;
    }

    static FaultKind of(String s) {
        for (FaultKind k : values()) {
            if (k.label.equals(s.trim())) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown kind '" + s + "'; kinds: "
                + Arrays.stream(values()).map(k -> k.label).toList());
    }

    /** @return the kinds of {@code --kinds all}: the management-plane kinds only with a highly available plane */
    static List<FaultKind> all(boolean haPlane) {
        return Arrays.stream(values()).filter(k -> haPlane || !k.mgmtPlane).toList();
    }

    /**
     * @param netns   network namespaces were set up
     * @param haPlane the campaign runs with several management servers on etcd
     * @return why {@code kind} cannot run here, or null when it can
     */
    static String skipReason(FaultKind kind, boolean netns, String noNetnsReason, boolean haPlane) {
        if (kind.network && !netns) {
            return noNetnsReason;
        }
        if (kind.mgmtPlane && !haPlane) {
            return "needs several management servers on etcd (--etcd 3 --mgmt 3)";
        }
        return null;
    }
}
