package io.rdmablock.tools.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * fio's batching of submissions and completions for one job clone (fio HOWTO "iodepth_batch_submit",
 * "iodepth_batch_complete_min", "iodepth_batch_complete_max", "iodepth_low"; fio 3.33 backend.c {@code do_io} and
 * {@code wait_for_completions}, init.c {@code fixup_options}), on the bench's units that each go on from their own
 * completion:
 * <ul>
 * <li><b>iodepth_low=L</b> (default and 0: iodepth; more than iodepth is iodepth): once the queue was full, completed
 * units do not refill it until at most L I/Os are still in flight; then all of them are prepared and submitted.</li>
 * <li><b>iodepth_batch_complete_min=M</b> (alias {@code iodepth_batch_complete}; default 1; 0 is 1, fio's "at least
 * one when the queue is full"): a reap waits for {@code min(M, I/Os in flight when it began)} completions; fio's
 * do-while then reaps again while more than L are in flight.</li>
 * <li><b>iodepth_batch_complete_max=X</b>: at most X completions per reap in fio; here completions arrive one by one,
 * so a reap ends with its M-th completion and X only has to be at least M (fio raises a smaller X to M).</li>
 * <li><b>iodepth_batch=N</b> (alias {@code iodepth_batch_submit}; default 1; 0 or more than iodepth is iodepth): the
 * units released together are prepared first and submitted N at a time (fio's commit of N queued I/Os); a remainder
 * below N goes at once, as fio commits when the queue is full or it must reap.</li>
 * </ul>
 * With every option at its default this is the plain loop (each completion refills at once), and the job has no
 * batching object. Values are integers 0..65535 ({@link #set}); anything else fails before any I/O naming the
 * option, the job and the bounds.
 *
 * @param <U> the I/O unit
 */
final class IoBatching<U> {
    /** The job's options as given: {submit, completeMin, completeMax, low}; -1 = not given. */
    static final class Options {
        int submit = -1;
        int completeMin = -1;
        int completeMax = -1;
        int low = -1;

        void set(String job, String k, String v) {
            int n;
            try {
                n = FioValues.integer(k, v, 0, 65535);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("invalid " + k + ": job '" + job + "': " + k + "=" + v
                        + ", min=0, max=65535 (fio limits it to iodepth)");
            }
            switch (k) {
                case "iodepth_batch", "iodepth_batch_submit" -> submit = n;
                case "iodepth_batch_complete", "iodepth_batch_complete_min" -> completeMin = n;
                case "iodepth_batch_complete_max" -> completeMax = n;
                case "iodepth_low" -> low = n;
                default -> throw new IllegalStateException(k);
            }
        }

        boolean given() {
            return submit >= 0 || completeMin >= 0 || completeMax >= 0 || low >= 0;
        }
    }

    final int depth;
    final int low;
    final int submitBatch;
    final int completeMin;
    final int completeMax;
    private final List<U> waiting = new ArrayList<>();
    private int callMin;
    private int callGot;

    /** fio's fixup_options on the given values, for a queue of {@code depth}. */
    IoBatching(Options o, int depth) {
        this.depth = depth;
        this.low = o.low <= 0 || o.low > depth ? depth : o.low;
        this.submitBatch = o.submit < 0 ? 1 : o.submit == 0 || o.submit > depth ? depth : o.submit;
        this.completeMin = o.completeMin < 0 ? 1 : o.completeMin;
        this.completeMax = Math.max(o.completeMax < 0 ? completeMin : o.completeMax, completeMin);
    }

    /** The batching of a job, or null when its options are all defaults. */
    static <U> IoBatching<U> of(JobSpec spec) {
        return spec.batchOptions.given() ? new IoBatching<>(spec.batchOptions, spec.iodepth) : null;
    }

    /**
     * The units of {@code go} that {@code prepare} readied (the others wait for a timer or ended), in batches of
     * {@code iodepth_batch} to submit one after the other.
     */
    List<List<U>> prepared(List<U> go, java.util.function.Predicate<U> prepare) {
        List<List<U>> batches = new ArrayList<>();
        List<U> b = new ArrayList<>();
        for (U u : go) {
            if (prepare.test(u)) {
                b.add(u);
                if (b.size() == submitBatch) {
                    batches.add(b);
                    b = new ArrayList<>();
                }
            }
        }
        if (!b.isEmpty()) {
            batches.add(b);
        }
        return batches;
    }

    /**
     * Unit {@code u} completed, leaving {@code inFlight} I/Os of the clone in flight. Returns the units to refill now
     * (those the reap released, in completion order), or an empty list while the reap goes on.
     */
    synchronized List<U> completed(U u, int inFlight) {
        waiting.add(u);
        if (callMin == 0) { // a new reap: it waits for min(M, I/Os in flight when it began), at least 1
            callMin = Math.max(1, Math.min(completeMin, inFlight + 1));
            callGot = 0;
        }
        callGot++;
        if (callGot < callMin && inFlight > 0) {
            return List.of();
        }
        callMin = 0;
        if (inFlight > low) {
            return List.of(); // fio reaps again while more than iodepth_low are in flight
        }
        List<U> go = new ArrayList<>(waiting);
        waiting.clear();
        return go;
    }
}
