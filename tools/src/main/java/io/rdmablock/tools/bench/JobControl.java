package io.rdmablock.tools.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * fio's job control options (fio(1) "Job control"; backend.c, libfio.c {@code fio_terminate_threads} of fio 3.33):
 * <ul>
 * <li>{@code exitall}: when a job finishes (every clone), the jobs selected by {@code exit_what} are stopped as at the
 *     end of their runtime (no error): {@code group} (default) the jobs of the same reporting group,
 *     {@code stonewall} every job running at that moment (any group; later phases still run), {@code all} every
 *     job, running or not yet started: later phases do not run.</li>
 * <li>{@code exitall_on_error}: the same when a job ends with an error.</li>
 * <li>{@code wait_for=NAME}: the job starts when every clone of job NAME finished. NAME must be an earlier job of the
 *     file with a unique name (fio's limits); a waitee in an earlier phase has finished already.</li>
 * </ul>
 * A stopped job says so in its messages ({@code stopped by exitall of job 'a' (exit_what=group)}); a clone waiting
 * for its rate or thinktime slot ends when that wait ends (at the latest at its runtime). Bad values fail
 * before any I/O naming the option, value, job and what is allowed.
 */
final class JobControl {
    enum ExitWhat { GROUP, STONEWALL, ALL }

    static final Set<String> OPTIONS = Set.of("exitall", "exitall_on_error", "exit_what", "wait_for");

    boolean exitall;
    boolean exitallOnError;
    ExitWhat exitWhat = ExitWhat.GROUP;
    String waitFor;

    void set(JobSpec j, String k, String v) {
        try {
            switch (k) {
                case "exitall" -> exitall = FioValues.bool(k, v);
                case "exitall_on_error" -> exitallOnError = FioValues.bool(k, v);
                case "exit_what" -> exitWhat = switch (v.trim()) {
                    case "group" -> ExitWhat.GROUP;
                    case "stonewall" -> ExitWhat.STONEWALL;
                    case "all" -> ExitWhat.ALL;
                    default -> throw new IllegalArgumentException("invalid exit_what: '" + v
                            + "', allowed=group|stonewall|all");
                };
                case "wait_for" -> {
                    if (v.isBlank()) {
                        throw new IllegalArgumentException("invalid wait_for: empty, want the name of an earlier job");
                    }
                    waitFor = v.trim();
                }
                default -> throw new IllegalStateException("unhandled option " + k);
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " (job '" + j.name + "')", e);
        }
    }

    /** startdelay=LO-HI (fio's range form), resolved by {@link #resolveStartDelay}; -1 = not a range. */
    long startDelayLo = -1;
    long startDelayHi = -1;

    /**
     * {@code startdelay}: a time (seconds by default), or fio's range {@code LO-HI} (each a time): the job starts a
     * random time in the range later, drawn once per job from its seed (the same with randrepeat=1; fio draws per
     * clone). Returns the delay in ns for a plain time, else records the range and returns 0.
     *
     * @throws IllegalArgumentException naming the option, value, job and bounds (LO at most HI)
     */
    long startDelay(JobSpec j, String k, String v) {
        int dash = v.indexOf('-', 1);
        try {
            if (dash < 0) {
                startDelayLo = startDelayHi = -1;
                return FioValues.timeNs(k, v);
            }
            startDelayLo = FioValues.timeNs(k, v.substring(0, dash));
            startDelayHi = FioValues.timeNs(k, v.substring(dash + 1));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " (job '" + j.name + "')", e);
        }
        if (startDelayLo > startDelayHi) {
            throw new IllegalArgumentException("invalid " + k + ": '" + v + "' in job '" + j.name
                    + "': the range's low end must not exceed its high end (min=0, max=" + v.substring(dash + 1) + ")");
        }
        return 0;
    }

    /** Draws a startdelay range once the job's seed options are known (after all options are set). */
    void resolveStartDelay(JobSpec j) {
        if (startDelayLo >= 0) {
            j.startDelayNs = startDelayLo + new java.util.SplittableRandom(j.seed() ^ j.name.hashCode())
                    .nextLong(startDelayHi - startDelayLo + 1);
        }
    }

    /**
     * Checks every wait_for of the file: the waitee is an earlier job with a unique name, not the job itself.
     *
     * @throws IllegalArgumentException naming the job and the waitee
     */
    static void validate(List<JobSpec> jobs) {
        Map<String, Integer> count = new HashMap<>();
        jobs.forEach(j -> count.merge(j.name, 1, Integer::sum));
        for (int i = 0; i < jobs.size(); i++) {
            JobSpec j = jobs.get(i);
            String w = j.control.waitFor;
            if (w == null) {
                continue;
            }
            boolean earlier = jobs.subList(0, i).stream().anyMatch(o -> o.name.equals(w));
            if (!earlier || count.get(w) > 1) {
                throw new IllegalArgumentException("invalid wait_for: job '" + j.name + "': wait_for=" + w + ": "
                        + (earlier ? "more than one job is named '" + w + "'" : "no job named '" + w + "' before it")
                        + " (the waitee must be an earlier job with a unique name, as in fio)");
            }
        }
    }

    /** One run of a job file: what exit_what=all stopped, and the jobs of the phase running now. */
    static final class Run {
        private volatile boolean all;
        private volatile String allBy;

        /** Whether exit_what=all stopped the run: later phases are not run. */
        boolean stoppedAll() {
            return all;
        }

        String stoppedBy() {
            return allBy;
        }

        /**
         * Begins the jobs of a phase: at once, or (wait_for) when every clone of the waitee finished; then watches
         * each job's end for exitall / exitall_on_error. Uses one virtual thread per job, ended with the phase.
         */
        void begin(List<Job> phase, long startNs) {
            List<Thread> watchers = new ArrayList<>();
            for (Job j : phase) {
                String w = j.spec.control.waitFor;
                List<Job> waitees = w == null ? List.of() : phase.stream().filter(o -> o.spec.name.equals(w)).toList();
                if (waitees.isEmpty()) {
                    j.begin(startNs);
                } else {
                    watchers.add(Thread.ofVirtual().name("bench-wait-" + j.name).start(() -> {
                        try {
                            for (Job o : waitees) {
                                o.finished.await();
                            }
                            j.begin(System.nanoTime()); // startdelay counts from here
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }));
                }
                JobControl c = j.spec.control;
                if (c.exitall || c.exitallOnError) {
                    Thread.ofVirtual().name("bench-exitall-" + j.name).start(() -> {
                        try {
                            j.finished.await();
                        } catch (InterruptedException e) {
                            return;
                        }
                        if (c.exitall || j.errorCode() != 0) {
                            terminate(phase, j);
                        }
                    });
                }
            }
        }

        private void terminate(List<Job> phase, Job by) {
            JobControl c = by.spec.control;
            String why = "stopped by " + (c.exitall ? "exitall" : "exitall_on_error") + " of job '" + by.spec.name
                    + "' (exit_what=" + c.exitWhat.name().toLowerCase() + ")";
            if (c.exitWhat == ExitWhat.ALL) {
                all = true;
                allBy = why;
            }
            java.util.Set<JobSpec> told = new java.util.HashSet<>(); // one message per job, not per clone
            for (Job o : phase) {
                if (o.spec == by.spec || o.finished.getCount() == 0) {
                    continue;
                }
                boolean running = o.startNs != 0;
                boolean hit = switch (c.exitWhat) {
                    case GROUP -> o.spec.groupId == by.spec.groupId;
                    case STONEWALL -> running;
                    case ALL -> true;
                };
                if (hit && !o.stop) {
                    if (told.add(o.spec)) {
                        o.messages.add(why);
                    }
                    o.stop = true;
                }
            }
        }
    }
}
