package io.rdmablock.tools.bench;

import io.rdmablock.initiator.BlockDevice;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Runs a set of jobs concurrently (fio runs the jobs of a file in parallel): opens one device per job clone (one
 * queue pair each), starts every clone at the same instant, prints a progress line every second, samples IOPS and
 * bandwidth once per second after the ramp, measures CPU time of this process and of the storage node between the
 * end of the ramp and the end of the run, and closes everything.
 */
final class BenchRun {

    /** Where the progress line goes and how: {@code tty} rewrites one line with '\r'. */
    record Progress(PrintStream out, boolean enabled, boolean tty) {
        static Progress none() {
            return new Progress(System.err, false, false);
        }
    }

    /** Trace replay instead of generated jobs. */
    record Replay(Path trace, boolean noStall, int timeScalePercent) {
    }

    /**
     * @param logs  the write_*_log files written (and those --plot asked for)
     * @param plots the SVG plots written by --plot, empty without
     */
    record Outcome(List<Job> jobs, List<FioReport.Entry> entries, FioReport.Cpu cpu, List<Path> logs, List<Path> plots) {
        boolean failed() {
            return entries.stream().anyMatch(e -> e.error() != 0);
        }
    }

    private BenchRun() {
    }

    static Outcome run(List<JobSpec> specs, Replay replay, Supplier<BlockDevice> devices, String nodePid,
                       Progress progress) throws IOException, InterruptedException {
        return run(specs, replay, devices, nodePid, progress, Path.of("."));
    }

    /**
     * Runs the jobs phase by phase (fio's stonewall: a phase starts when every job of the previous one finished),
     * the jobs of a phase concurrently.
     *
     * @param auxPath directory of verify state files (verify_state_save / verify_state_load)
     */
    static Outcome run(List<JobSpec> specs, Replay replay, Supplier<BlockDevice> devices, String nodePid,
                       Progress progress, Path auxPath) throws IOException, InterruptedException {
        return run(specs, replay, devices, nodePid, progress, auxPath, null);
    }

    /**
     * As {@link #run(List, Replay, Supplier, String, Progress, Path)}, and with {@code plotDir} (--plot) SVG plots of
     * the jobs' logs there ({@link LogPlots}; logs a job does not write itself go there too, {@link IoLogs#open}).
     */
    static Outcome run(List<JobSpec> specs, Replay replay, Supplier<BlockDevice> devices, String nodePid,
                       Progress progress, Path auxPath, Path plotDir) throws IOException, InterruptedException {
        JobSpec.assignGroups(specs);
        JobControl.validate(specs);
        JobControl.Run control = new JobControl.Run(); // exitall, exit_what, wait_for
        List<Job> jobs = new ArrayList<>();
        ProcStat[] cpu0 = new ProcStat[2];
        int phases = specs.stream().mapToInt(s -> s.phase).max().orElse(0) + 1;
        for (int p = 0; p < phases; p++) {
            int phase = p;
            if (control.stoppedAll()) {
                progress.out().println("rdmablock bench: phases " + (p + 1) + ".." + phases + " not run: "
                        + control.stoppedBy());
                break;
            }
            List<JobSpec> in = specs.stream().filter(s -> s.phase == phase).toList();
            if (phases > 1) {
                progress.out().println("rdmablock bench: phase " + (p + 1) + " of " + phases + ": "
                        + String.join(", ", in.stream().map(s -> s.name).toList()));
            }
            runPhase(in, replay, devices, nodePid, progress, auxPath, jobs, cpu0, plotDir, control); // goes on after a failure
        }
        ProcStat c1 = ProcStat.read("self");
        ProcStat n1 = nodePid == null ? null : ProcStat.read(nodePid);
        FioReport.Cpu cpu = new FioReport.Cpu(cpu0[0] == null || c1 == null ? null : c1.minus(cpu0[0]),
                cpu0[1] == null || n1 == null ? null : n1.minus(cpu0[1]), nodePid);
        List<Path> logs = new ArrayList<>();
        jobs.stream().filter(j -> j.logs != null).forEach(j -> logs.addAll(j.logs.files()));
        List<Path> plots = plotDir == null ? List.of() : LogPlots.write(plotDir, jobs);
        return new Outcome(jobs, FioReport.entries(jobs), cpu, logs, plots);
    }

    private static boolean runPhase(List<JobSpec> specs, Replay replay, Supplier<BlockDevice> devices, String nodePid,
                                    Progress progress, Path auxPath, List<Job> all, ProcStat[] cpu0, Path plotDir,
                                    JobControl.Run control)
            throws IOException, InterruptedException {
        List<BlockDevice> opened = new ArrayList<>();
        List<Job> jobs = new ArrayList<>();
        Flow flows = new Flow(); // fio's flow_id groups of the jobs running together
        try {
            for (JobSpec spec : specs) {
                Worker first = null;
                for (int c = 0; c < (replay != null ? 1 : spec.numjobs); c++) {
                    BlockDevice dev = devices.get();
                    opened.add(dev);
                    Job j = replay != null
                            ? new ReplayWorker(spec, dev, replay.trace(), replay.noStall(), replay.timeScalePercent())
                            : new Worker(spec, spec.name, dev, c, all.size() + jobs.size(), first);
                    j.auxPath = auxPath;
                    j.logs = replay != null ? null : IoLogs.open(spec, all.size() + jobs.size() + 1, plotDir);
                    if (j instanceof Worker w) {
                        w.flow = flows.join(spec);
                    }
                    if (j instanceof Worker w && c == 0) {
                        first = w;
                        if (spec.verifyStateLoad) {
                            w.loadState(auxPath);
                        }
                    }
                    jobs.add(j);
                }
                for (String w : spec.warnings) {
                    progress.out().println("rdmablock bench: warning: job '" + spec.name + "': " + w);
                }
            }
            all.addAll(jobs);
            List<SteadyState> steady = SteadyState.watch(jobs);
            long start = System.nanoTime();
            control.begin(jobs, start);
            steady.forEach(s -> s.start(start));
            long rampEnd = start + specs.stream().mapToLong(s -> s.startDelayNs + s.rampTimeNs).max().orElse(0);
            if (rampEnd == start && cpu0[0] == null) {
                cpu0[0] = ProcStat.read("self");
                cpu0[1] = nodePid == null ? null : ProcStat.read(nodePid);
            }
            long end = jobs.stream().mapToLong(j -> j.endNs).max().orElse(0);
            boolean sizeOnly = jobs.stream().anyMatch(j -> j.endNs == 0);
            long deadline = sizeOnly ? Long.MAX_VALUE : end + TimeUnit.SECONDS.toNanos(120);
            long nextTick = start + TimeUnit.SECONDS.toNanos(1);
            boolean sampling = false;
            while (true) {
                boolean done = true;
                long tick = nextTick;
                long wake = steady.stream().filter(s -> !s.attained()).mapToLong(SteadyState::nextCheckNs)
                        .filter(t -> t - tick < 0).min().orElse(tick);
                for (Job j : jobs) {
                    long wait = Math.max(0, wake - System.nanoTime());
                    if (!j.await(wait)) {
                        done = false;
                        break;
                    }
                }
                long now = System.nanoTime();
                for (SteadyState s : steady) {
                    s.poll(now);
                }
                if (!sampling && now - rampEnd >= 0) {
                    sampling = true;
                    if (cpu0[0] == null) {
                        cpu0[0] = ProcStat.read("self");
                        cpu0[1] = nodePid == null ? null : ProcStat.read(nodePid);
                    }
                    jobs.forEach(Job::sample);
                } else if (sampling && now - nextTick >= 0 && !done) {
                    jobs.forEach(Job::sample);
                }
                if (done) {
                    break;
                }
                if (now - nextTick >= 0) {
                    printProgress(progress, jobs, start, rampEnd, end);
                    nextTick += TimeUnit.SECONDS.toNanos(1);
                }
                if (now - deadline >= 0) {
                    for (Job j : jobs) {
                        if (j.finished.getCount() > 0) {
                            j.fail(new java.util.concurrent.TimeoutException("job did not finish 120 s after its runtime"));
                        }
                    }
                    break;
                }
            }
            if (progress.enabled() && progress.tty()) {
                progress.out().print("\r" + " ".repeat(100) + "\r");
            }
            boolean failed = false;
            for (Job j : jobs) {
                if (j.logs != null) {
                    j.logs.close();
                }
                if (j.finished.getCount() == 0) {
                    j.release();
                }
                failed |= j.errorCode() != 0;
                if (j instanceof Worker w && w.cloneIndex() == 0 && j.spec.verifyStateSave && w.state() != null) {
                    Path f = w.stateFile(auxPath);
                    w.state().save(f);
                    progress.out().println("rdmablock bench: job '" + j.name + "': verify state saved to " + f);
                }
            }
            return failed;
        } finally {
            for (BlockDevice d : opened) {
                try {
                    d.close();
                } catch (RuntimeException ignored) {
                    // keep closing the others
                }
            }
        }
    }

    private static void printProgress(Progress p, List<Job> jobs, long start, long rampEnd, long end) {
        if (!p.enabled()) {
            return;
        }
        long now = System.nanoTime();
        long rOps = 0;
        long rBytes = 0;
        long wOps = 0;
        long wBytes = 0;
        int running = 0;
        boolean reads = false;
        boolean writes = false;
        for (Job j : jobs) {
            if (j.finished.getCount() > 0) {
                running++;
            }
            reads |= j.spec.rw.reads;
            writes |= j.spec.rw.writes;
            int n = j.samples.size();
            if (n >= 2) {
                long[] a = j.samples.get(n - 2);
                long[] b = j.samples.get(n - 1);
                rOps += b[0] - a[0];
                rBytes += b[1] - a[1];
                wOps += b[2] - a[2];
                wBytes += b[3] - a[3];
            }
        }
        String mode = reads && writes ? "m" : reads ? "r" : "w";
        String pct = end == 0 ? "-.-%" : String.format(Locale.ROOT, "%.1f%%", 100.0 * (now - start) / (end - start));
        long etaS = end == 0 ? 0 : Math.max(0, (end - now) / 1_000_000_000L);
        String line = String.format(Locale.ROOT, "Jobs: %d (f=%d): [%s(%d)][%s][r=%s/s,w=%s/s][r=%s,w=%s IOPS][eta %02dm:%02ds]%s",
                running, running, mode, running, pct, FioReport.bin(rBytes), FioReport.bin(wBytes), FioReport.num(rOps),
                FioReport.num(wOps), etaS / 60, etaS % 60, now < rampEnd ? " (ramp)" : "");
        p.out().print(p.tty() ? "\r" + line : line + "\n");
        p.out().flush();
    }
}
