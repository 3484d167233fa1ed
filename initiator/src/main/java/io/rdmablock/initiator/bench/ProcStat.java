package io.rdmablock.initiator.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time of a process from {@code /proc/<pid>/stat} (proc(5): fields 14 utime and 15 stime, in clock ticks of
 * 1/100 s: USER_HZ is 100 on Linux) and context switches, summed over every thread of the process from
 * {@code /proc/<pid>/task/<tid>/status} (proc(5): {@code voluntary_ctxt_switches}, {@code nonvoluntary_ctxt_switches};
 * a process's own status file counts its main thread only). Threads that exited between two readings drop out of
 * the difference, so a run's figure is a lower bound when threads come and go.
 *
 * @param userNs   user CPU time in nanoseconds
 * @param systemNs system CPU time in nanoseconds
 * @param ctx      voluntary + involuntary context switches of all its live threads
 */
record ProcStat(long userNs, long systemNs, long ctx) {
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
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", pid, "task"))) {
                for (Path task : tasks) {
                    ctx += switches(task.resolve("status"));
                }
            }
            return new ProcStat(utime * NS_PER_TICK, stime * NS_PER_TICK, ctx);
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

    ProcStat minus(ProcStat o) {
        return new ProcStat(userNs - o.userNs, systemNs - o.systemNs, ctx - o.ctx);
    }
}
