package io.rdmablock.tools.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU time of a process from {@code /proc/<pid>/stat} (proc(5): fields 14 utime and 15 stime, in clock ticks of
 * 1/100 s: USER_HZ is 100 on Linux) and context switches, summed over every thread of the process from
 * {@code /proc/<pid>/task/<tid>/status} (proc(5): {@code voluntary_ctxt_switches}, {@code nonvoluntary_ctxt_switches};
 * a process's own status file counts its main thread only). A difference ({@link #minus}) is taken thread by thread
 * (by tid): a thread started between the readings counts from 0, one that exited drops out, so a run's figure is a
 * lower bound when threads come and go, never negative (summing live threads first and subtracting the sums went
 * negative when the bench's job threads of the first reading had exited by the second).
 *
 * @param userNs   user CPU time in nanoseconds
 * @param systemNs system CPU time in nanoseconds
 * @param ctx      voluntary + involuntary context switches of all its live threads (of a difference: see above)
 * @param byTask   switches per live thread, by tid (empty for a difference)
 */
record ProcStat(long userNs, long systemNs, long ctx, Map<String, Long> byTask) {
    static final long NS_PER_TICK = 10_000_000L;

    /** Reads {@code pid} ("self" for this process); null when the process does not exist or /proc is unreadable. */
    static ProcStat read(String pid) {
        try {
            String stat = Files.readString(Path.of("/proc", pid, "stat"));
            // the command name (field 2) may contain spaces: fields after it start after the last ')'
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long utime = Long.parseLong(f[11]);
            long stime = Long.parseLong(f[12]);
            long ctx = 0;
            Map<String, Long> byTask = new HashMap<>();
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", pid, "task"))) {
                for (Path task : tasks) {
                    long n = switches(task.resolve("status"));
                    byTask.put(task.getFileName().toString(), n);
                    ctx += n;
                }
            }
            return new ProcStat(utime * NS_PER_TICK, stime * NS_PER_TICK, ctx, Map.copyOf(byTask));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Voluntary + involuntary switches of one thread; 0 when it exited meanwhile. */
    private static long switches(Path status) {
        long n = 0;
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                    n += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                }
            }
        } catch (IOException e) {
            return 0; // the thread exited
        }
        return n;
    }

    long totalNs() {
        return userNs + systemNs;
    }

    /** This reading less an earlier one of the same process: CPU times, and switches thread by thread (tid). */
    ProcStat minus(ProcStat o) {
        long ctxDiff = 0;
        for (Map.Entry<String, Long> e : byTask.entrySet()) {
            ctxDiff += Math.max(0, e.getValue() - o.byTask.getOrDefault(e.getKey(), 0L));
        }
        return new ProcStat(userNs - o.userNs, systemNs - o.systemNs, ctxDiff, Map.of());
    }
}
