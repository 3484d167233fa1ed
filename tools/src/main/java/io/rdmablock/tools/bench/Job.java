package io.rdmablock.tools.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What every running job (a {@link Worker} clone or a {@link ReplayWorker}) shares with the runner: its timing
 * window, live counters for the progress line, per-unit statistics merged at the end, and its error state.
 * Times are {@link System#nanoTime()} values.
 */
abstract class Job {
    static final int MAX_MESSAGES = 5;

    final JobSpec spec;
    final String name;
    /** {read, write[, trim]} statistics of each I/O unit; filled before {@link #begin}. */
    final List<DirStats[]> unitStats = new ArrayList<>();
    final LongAdder readOps = new LongAdder();
    final LongAdder readBytes = new LongAdder();
    final LongAdder writeOps = new LongAdder();
    final LongAdder writeBytes = new LongAdder();
    final LongAdder trimOps = new LongAdder();
    final LongAdder trimBytes = new LongAdder();
    final LongAdder verifiedBlocks = new LongAdder();
    final AtomicLong verifyErrors = new AtomicLong();
    final List<String> messages = Collections.synchronizedList(new ArrayList<>());
    /** Per-second samples {readOps, readBytes, writeOps, writeBytes, trimOps, trimBytes} taken after the ramp. */
    final List<long[]> samples = new ArrayList<>();
    final CountDownLatch finished;
    volatile long startNs;
    volatile long rampEndNs;
    /** Where verify state files are saved and loaded (fio's --aux-path; default the working directory). */
    volatile java.nio.file.Path auxPath = java.nio.file.Path.of(".");
    /** End of the run for time-limited jobs, 0 when only the size limits it. */
    volatile long endNs;
    volatile long mainEndNs;
    volatile boolean stop;
    volatile Throwable error;
    /** fio's write_*_log files of this clone, or null ({@link IoLogs}); closed by the runner when it finished. */
    volatile IoLogs logs;
    /** The steady-state check watching this job (shared by a group with group_reporting), or null. */
    volatile SteadyState steady;

    Job(JobSpec spec, String name, int units) {
        this.spec = spec;
        this.name = name;
        this.finished = new CountDownLatch(units);
    }

    /** Starts issuing I/O; {@code startNs} is the common start of every job of the phase ({@code startdelay} later). */
    final void begin(long startNs) {
        this.startNs = startNs + spec.startDelayNs;
        this.rampEndNs = this.startNs + spec.rampTimeNs;
        this.endNs = spec.runtimeNs > 0 ? rampEndNs + spec.runtimeNs : 0;
        start();
    }

    abstract void start();

    /** Frees buffers once finished. */
    abstract void release();

    final void finishUnit() {
        finished.countDown();
    }

    final boolean await(long timeoutNs) throws InterruptedException {
        return finished.await(timeoutNs, TimeUnit.NANOSECONDS);
    }

    final void fail(Throwable t) {
        if (error == null) {
            error = t;
            messages.add(t instanceof java.util.concurrent.TimeoutException ? "error: " + t.getMessage()
                    : "I/O error: " + t);
        }
        stop = true;
    }

    final void verifyFailed(String message) {
        verifyErrors.incrementAndGet();
        if (messages.size() < MAX_MESSAGES) {
            messages.add("verify: " + message);
        }
        if (spec.verifyFatal) {
            stop = true;
        }
    }

    /**
     * fio's per-job error number: 0, EIO (5) for an I/O error, ETIMEDOUT (110) for a latency beyond latency_target at
     * depth 1 or a job that did not finish, EILSEQ (84) for a verify failure.
     */
    final int errorCode() {
        if (error instanceof java.util.concurrent.TimeoutException) {
            return 110;
        }
        return error != null ? 5 : verifyErrors.get() > 0 ? 84 : 0;
    }

    final DirStats merged(boolean read) {
        return merged(read ? 0 : 1);
    }

    /** The units' statistics of direction {@code ddir} (fio's: 0 read, 1 write, 2 trim) merged. */
    final DirStats merged(int ddir) {
        DirStats m = new DirStats();
        for (DirStats[] u : unitStats) {
            if (ddir < u.length) {
                m.add(u[ddir]);
            }
        }
        return m;
    }

    /** Counts a completed I/O of direction {@code ddir} (0 read, 1 write, 2 trim) for the live figures. */
    final void count(int ddir, int lengthBytes) {
        (ddir == 0 ? readOps : ddir == 1 ? writeOps : trimOps).increment();
        (ddir == 0 ? readBytes : ddir == 1 ? writeBytes : trimBytes).add(lengthBytes);
    }

    /** Measured time: ramp end to the end of the main phase (at least 1 ms). */
    final long runtimeNs() {
        long end = mainEndNs != 0 ? mainEndNs : System.nanoTime();
        return Math.max(end - rampEndNs, 1_000_000L);
    }

    final void sample() {
        samples.add(new long[] {readOps.sum(), readBytes.sum(), writeOps.sum(), writeBytes.sum(), trimOps.sum(),
            trimBytes.sum()});
    }
}
