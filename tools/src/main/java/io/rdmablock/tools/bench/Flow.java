package io.rdmablock.tools.bench;

import java.util.HashMap;
import java.util.Map;

/**
 * fio's token-based flow control (fio HOWTO "flow", "flow_id", "flow_sleep"; fio's flow.c), one instance per set of
 * jobs that run together: the job clones with a non-zero {@code flow} weight and the same {@code flow_id} share a
 * counter (starting at 1) and the sum of their weights. Before each I/O a member is held back while its own count
 * divided by the shared count exceeds its weight divided by the total weight; otherwise both counts go up by one. So
 * the members' I/O counts keep the ratio of their weights (3:2:1 for weights 3, 2, 1), within one I/O per member. A
 * member that ends gives back its count and weight (fio's flow_put), so the others go on unhindered. Thread-safe.
 */
final class Flow {
    /** The wait of a held-back I/O before it asks again when {@code flow_sleep} is 0 (fio spins instead). */
    static final long DEFAULT_RETRY_NS = 50_000;

    private final Map<Integer, Group> groups = new HashMap<>();

    private static final class Group {
        long counter = 1;
        long totalWeight;
    }

    /** One job clone's membership in its flow. */
    static final class Member {
        private final Group group;
        private final int weight;
        private final long retryNs;
        private long count;
        private boolean left;

        private Member(Group group, int weight, long retryNs) {
            this.group = group;
            this.weight = weight;
            this.retryNs = retryNs;
        }

        /** fio's flow_threshold_exceeded: 0 when the I/O may go now (and is counted), else the nanoseconds to wait. */
        long admit() {
            synchronized (group) {
                if (left) {
                    return 0;
                }
                if ((double) count / group.counter > (double) weight / group.totalWeight) {
                    return retryNs;
                }
                group.counter++;
                count++;
                return 0;
            }
        }

        /** The I/Os this member was admitted. */
        long count() {
            synchronized (group) {
                return count;
            }
        }

        /** Leaves the flow (idempotent): its count and weight no longer hold the others back. */
        void leave() {
            synchronized (group) {
                if (!left) {
                    left = true;
                    group.counter -= count;
                    group.totalWeight -= weight;
                }
            }
        }
    }

    /** Joins a clone of {@code spec} to its flow; null when the job has no flow weight. */
    synchronized Member join(JobSpec spec) {
        PatternOptions p = spec.pattern;
        if (p.flow == 0) {
            return null;
        }
        Group g = groups.computeIfAbsent(p.flowId, id -> new Group());
        synchronized (g) {
            g.totalWeight += p.flow;
        }
        return new Member(g, p.flow, p.flowSleepNs > 0 ? p.flowSleepNs : DEFAULT_RETRY_NS);
    }
}
