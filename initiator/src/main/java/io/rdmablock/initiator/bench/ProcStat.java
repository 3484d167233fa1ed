package io.rdmablock.initiator.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time of a process from {@code /proc/<pid>/stat} (proc(5): fields 14 utime and 15 stime, in clock ticks of
 * 1/100 s: USER_HZ is 100 on Linux) and context switches from {@code /proc/<pid>/status}.
 *
 * @param userNs   user CPU time in nanoseconds
 * @param systemNs system CPU time in nanoseconds
 * @param ctx      voluntary + involuntary context switches (of the main thread group leader)
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
            for (String line : Files.readAllLines(Path.of("/proc", pid, "status"))) {
                if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                    ctx += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                }
            }
            return new ProcStat(utime * NS_PER_TICK, stime * NS_PER_TICK, ctx);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    long totalNs() {
        return userNs + systemNs;
    }

    ProcStat minus(ProcStat o) {
        return new ProcStat(userNs - o.userNs, systemNs - o.systemNs, ctx - o.ctx);
    }
}
