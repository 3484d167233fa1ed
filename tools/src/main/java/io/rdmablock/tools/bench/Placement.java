package io.rdmablock.tools.bench;

import java.util.Set;

/**
 * fio's CPU and NUMA placement options (fio(1) "Threads, processes and job synchronization"): {@code cpumask},
 * {@code cpus_allowed}, {@code cpus_allowed_policy}, {@code numa_cpu_nodes}, {@code numa_mem_policy}. They cannot be
 * honoured: the JDK has no thread CPU affinity or NUMA memory binding, and the bench's I/O runs on the initiator's
 * shared queue threads, not on threads of the job. So each is checked (fio's syntax and values; a bad one fails
 * before any I/O naming option, value and job) and then accepted with a warning line saying it is not applied and
 * how to place the whole process instead ({@code taskset}/{@code numactl}).
 */
final class Placement {
    static final Set<String> OPTIONS = Set.of("cpumask", "cpus_allowed", "cpus_allowed_policy", "numa_cpu_nodes",
            "numa_mem_policy");

    private Placement() {
    }

    /** Checks option {@code k} of job {@code j} and adds the warning. */
    static void set(JobSpec j, String k, String v) {
        String t = v.trim();
        boolean ok = switch (k) {
            case "cpumask" -> t.matches("(0x[0-9a-fA-F]+|[0-9]+)");
            case "cpus_allowed", "numa_cpu_nodes" -> t.matches("\\^?\\d+(-\\d+)?(,\\^?\\d+(-\\d+)?)*") || t.equals("all")
                    && k.equals("numa_cpu_nodes");
            case "cpus_allowed_policy" -> t.equals("shared") || t.equals("split");
            case "numa_mem_policy" -> t.matches("default|local|(prefer:\\d+)|((bind|interleave):\\d+(-\\d+)?(,\\d+(-\\d+)?)*)");
            default -> throw new IllegalStateException("unhandled option " + k);
        };
        if (!ok) {
            throw new IllegalArgumentException("invalid " + k + ": '" + v + "' in job '" + j.name + "', allowed=" + switch (k) {
                case "cpumask" -> "a CPU bit mask (decimal or 0x hex)";
                case "cpus_allowed" -> "a CPU list, e.g. 0-3,6";
                case "numa_cpu_nodes" -> "all or a node list, e.g. 0-1,3";
                case "cpus_allowed_policy" -> "shared|split";
                default -> "default|local|prefer:N|bind:NODES|interleave:NODES";
            });
        }
        j.warnings.add(k + "=" + v + " not applied: a JVM cannot pin threads or bind memory (" + (k.startsWith("numa")
                ? "run the whole bench under numactl" : "run the whole bench under taskset") + ")");
    }
}
