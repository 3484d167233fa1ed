package io.rdmablock.e2e;

import java.util.Arrays;

/** The faults {@link FailoverCampaign} injects, one per cycle; {@code network} kinds need network namespaces. */
enum FaultKind {
    PRIMARY_KILL("primary-kill", false), PRIMARY_STOP("primary-stop", false),
    SECONDARY_KILL("secondary-kill", false), RESTART_ALL("restart-all", false),
    CUT_PRIMARY_MGMT("cut-primary-mgmt", true), CUT_PRIMARY_SECONDARY("cut-primary-secondary", true);

    final String label;
    final boolean network;

    FaultKind(String label, boolean network) {
        this.label = label;
        this.network = network;
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
}
