package io.rdmablock.node;

import io.rdmablock.mgmt.client.BackgroundInEffect;
import io.rdmablock.mgmt.client.NodeBackground;
import io.rdmablock.node.qos.BackgroundBudget;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's side of the background budget set from the management plane (docs/qos.md, "Background budget"): each
 * heartbeat answer's {@link io.rdmablock.mgmt.client.HeartbeatResponse#background} goes to the node's
 * {@link BackgroundBudget#setBounds} at once ({@link NodeBackground#STARTUP}: the start-up values,
 * {@code --resync-mib-s} and {@code --resync-min-mib-s}, taken from the budget when this object is made), and each
 * heartbeat reports the budget in effect ({@link #report}), once a server that knows the setting answered. An
 * answer without it (an older server) changes nothing and stops the reports until an answer has it again. A
 * heartbeat that got no answer (which an older leader's 400 for the unknown field would be) is followed by one
 * without the report, so a node is never stuck sending a field its server refuses. Runs on the agent thread
 * ({@link MgmtSync}).
 */
final class BackgroundSync {
    private static final Logger LOG = LoggerFactory.getLogger(BackgroundSync.class);
    private static final long MIB = 1L << 20;

    private final BackgroundBudget budget;
    private final long startCeiling;
    private final long startFloor;
    /** True once an answer carried the setting: the server knows the report (an older one refuses the field). */
    private volatile boolean serverKnows;
    /** True from a report sent until an answer came: the next heartbeat then goes without one. */
    private volatile boolean awaitingAnswer;

    /** @param budget the node's budget; its bounds now are the start-up values */
    BackgroundSync(BackgroundBudget budget) {
        this.budget = java.util.Objects.requireNonNull(budget, "budget");
        this.startCeiling = budget.ceilingBytesPerSecond();
        this.startFloor = budget.floorBytesPerSecond();
    }

    /**
     * Applies the bounds of a heartbeat answer.
     *
     * @param bounds the answer's setting: null (an older server) keeps the bounds, {@link NodeBackground#STARTUP}
     *               restores the start-up values; bounds the budget refuses (a floor above the ceiling, which the
     *               server does not store) are logged and ignored
     */
    void apply(NodeBackground bounds) {
        awaitingAnswer = false;
        if (bounds == null) {
            serverKnows = false;
            return;
        }
        serverKnows = true;
        long ceiling = bounds.startup() ? startCeiling : bounds.maxMiBps() * MIB;
        long floor = bounds.startup() ? startFloor : bounds.minMiBps() * MIB;
        try {
            if (budget.setBounds(ceiling, floor)) {
                LOG.info("background budget changed: ceiling={} MiB/s, floor={} MiB/s{}", ceiling / (double) MIB,
                        floor / (double) MIB, bounds.startup() ? " (the start-up values)" : "");
            }
        } catch (IllegalArgumentException e) {
            LOG.warn("background budget from the management server ignored: {}", e.getMessage());
        }
    }

    /**
     * @return the budget in effect for the next heartbeat; null while no answer said the server knows it, and once
     *         after a report that got no answer
     */
    BackgroundInEffect report() {
        if (!serverKnows || awaitingAnswer) {
            awaitingAnswer = false;
            return null;
        }
        awaitingAnswer = true;
        return new BackgroundInEffect(budget.rateBytesPerSecond(), budget.ceilingBytesPerSecond(),
                budget.floorBytesPerSecond());
    }
}
