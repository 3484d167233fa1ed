package io.rdmablock.tools.bench;

import java.util.concurrent.LinkedBlockingQueue;

/**
 * {@code io_submit_mode=offload} (fio HOWTO "io_submit_mode"; fio's rate-submit.c): the I/O a job clone prepares
 * (offset, length, rate and flow waits) is handed to this clone's own submitter thread, which issues it to the device
 * in the order it was handed over (FIFO). The depth stays the job's: only the clone's {@code iodepth} I/O units ever
 * hand I/O over, each again only after its previous I/O completed. fio offloads to {@code iodepth} worker threads
 * because its sync engines block in the submission; the device here is asynchronous, so one thread issuing keeps
 * the whole depth in flight. An I/O's latency starts when it is handed over, so time spent waiting for the submitter
 * is in its submission latency (fio's point of offload: no coordinated omission).
 */
final class Submitter {
    private static final Runnable STOP = () -> { };
    private final LinkedBlockingQueue<Runnable> queue = new LinkedBlockingQueue<>();
    private final Thread thread;

    /** Starts the submitter thread {@code bench-submit-<job>} (a daemon). */
    Submitter(String job) {
        thread = Thread.ofPlatform().daemon().name("bench-submit-" + job).start(this::loop);
    }

    /** Hands an I/O (the task that issues it) to the submitter; it runs after every one handed over before it. */
    void submit(Runnable issue) {
        queue.add(issue);
    }

    /** Ends the thread after the I/O already handed over (idempotent). */
    void stop() {
        queue.add(STOP);
    }

    private void loop() {
        while (true) {
            Runnable r;
            try {
                r = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            if (r == STOP) {
                return;
            }
            r.run();
        }
    }
}
