package io.rdmablock.tools.bench;

import io.rdmablock.initiator.BlockDevice;
import java.lang.foreign.MemorySegment;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * One job clone: {@code iodepth} I/O units on one device (one queue pair), each driven from its own completion
 * callback (run to completion: the thread that completes an I/O submits the next one, no hand-off, no lock).
 *
 * <p>Phases: MAIN runs the workload until {@code runtime} elapses (after {@code startdelay} and {@code ramp_time}),
 * or, unless {@code time_based}, until {@code loops x size} bytes were issued; completions that started before the
 * ramp ended are not recorded. {@link IoChooser} picks each I/O; {@link IoPacer} delays it for {@code rate},
 * {@code rate_iops} and {@code thinktime} (on a timer thread); {@link LatencyTarget} limits the depth during the
 * latency search (units above the depth park). With {@code verify} and writes, each write carries a new generation
 * ({@link BlockVerifyState}); {@code verify_backlog=N} reads back the acknowledged blocks each time N are pending; a VERIFY
 * phase then reads back every block written (verify reads are not in the statistics). A read must find the
 * generation of the last acknowledged write, or a newer one (a write in flight at a failure); an older one fails as a
 * lost write. Reads during MAIN check blocks written by this clone (or every block for read-only jobs, against the
 * loaded state when {@code verify_state_load=1}). A block is never in flight twice at once when verifying.
 * The first I/O error stops the clone (fio without continue_on_error). With {@code flow} the clone's {@link Flow}
 * member may hold an I/O back; with {@code io_submit_mode=offload} its {@link Submitter} thread issues the I/O.
 */
final class Worker extends Job {
    private final BlockDevice dev;
    private final int clone;
    private final long regionStart;
    private final long regionLength;
    private final IoChooser chooser;
    private final IoPacer pacer;
    private final Unit[] units;
    /** iodepth_batch*, iodepth_low: fio's submission and reaping batches, or null (issue 41). */
    private final IoBatching<Unit> batching;
    private final AtomicLong issuedBytes = new AtomicLong();
    private final AtomicInteger mainActive;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final boolean verifying;
    private final int verifyBs;
    private final long verifyBlocks;
    private final Set<Long> inFlightBlocks;
    private final VerifyReads verifyReads;
    private final Queue<Unit> parked = new ConcurrentLinkedQueue<>();
    private volatile BlockVerifyState state;
    private volatile boolean stateLoaded;
    private volatile LatencyTarget latency;
    private volatile ScheduledExecutorService timer;
    private volatile boolean verifyPhase;
    /** io_submit_mode=offload: the clone's submitter thread, else null; flow: its membership, else null (issue 41). */
    private volatile Submitter submitter;
    volatile Flow.Member flow;
    private volatile boolean latencyDone;
    private volatile int statsEpoch;
    /** The job's number in verify headers: its first clone's, 1-based (fio's thread_number). */
    private final int verifyThread;

    /**
     * @param clone     index of this clone of the job (0 .. numjobs - 1), in the verify state file name
     * @param jobNumber index of this clone among every clone of the run, which varies the seed (fio: thread number)
     * @param first     the job's first clone, whose verify state and busy-block set this clone shares (the clones
     *                  of a job cover the same region), or null for the first clone
     */
    Worker(JobSpec spec, String name, BlockDevice dev, int clone, int jobNumber, Worker first) {
        super(spec, name, spec.iodepth);
        this.dev = dev;
        this.clone = clone;
        this.regionStart = spec.limits.cloneStart(name, spec.regionOffset(dev.capacityBytes(), dev.lbaSize()), clone,
                dev.capacityBytes(), dev.lbaSize());
        this.regionLength = spec.limits.cloneLength(spec, regionStart, dev.capacityBytes(), dev.lbaSize());
        this.chooser = new IoChooser(spec, regionStart, regionLength, dev.capacityBytes(), dev.lbaSize(),
                spec.seed() + 7919L * jobNumber);
        this.pacer = IoPacer.needed(spec) ? new IoPacer(spec, spec.seed() + 7919L * jobNumber) : null;
        this.verifying = spec.verify != JobSpec.Verify.NONE;
        this.verifyBs = spec.bsWrite;
        this.verifyBlocks = regionLength / verifyBs;
        if (verifying && spec.blockAlign > 0 && spec.blockAlign % verifyBs != 0) {
            throw new IllegalArgumentException("invalid blockalign: blockalign=" + spec.blockAlign + " with verify must"
                    + " be a multiple of bs=" + verifyBs + " (a written block must be a verify block)");
        }
        boolean share = first != null && first.regionStart == regionStart && first.verifyBlocks == verifyBlocks;
        this.state = !verifying ? null : share ? first.state : new BlockVerifyState(verifyBs, regionStart, verifyBlocks);
        this.stateLoaded = share && first.stateLoaded;
        this.inFlightBlocks = !verifying ? null : share ? first.inFlightBlocks : ConcurrentHashMap.newKeySet();
        this.verifyThread = first != null ? first.verifyThread : jobNumber + 1;
        this.mainActive = new AtomicInteger(spec.iodepth);
        this.batching = IoBatching.of(spec);
        this.verifyReads = new VerifyReads(spec.verifyBacklog);
        this.units = new Unit[spec.iodepth];
        int maxBs = spec.maxBlockSize();
        for (int i = 0; i < units.length; i++) {
            units[i] = new Unit(i, dev.allocateBuffer(maxBs));
        }
    }

    /** The verify state file of this job in {@code dir}, shared by its clones ({@link BlockVerifyState#file}). */
    java.nio.file.Path stateFile(java.nio.file.Path dir) {
        return BlockVerifyState.file(dir, name);
    }

    int cloneIndex() {
        return clone;
    }

    /** Replaces the fresh state by one loaded for this region (verify_state_load); first clone only, before the others. */
    void loadState(java.nio.file.Path dir) throws java.io.IOException {
        state = BlockVerifyState.load(stateFile(dir), verifyBs, regionStart, verifyBlocks);
        stateLoaded = true;
    }

    BlockVerifyState state() {
        return state;
    }

    private final class Unit implements BiConsumer<Void, Throwable> {
        final int index;
        final MemorySegment buffer;
        final BlockVerifier verifier;
        DirStats[] dirs = {new DirStats(), new DirStats(), new DirStats()};
        int epoch;
        boolean isRead;
        boolean isTrim;
        boolean verifyRead;
        boolean pending;
        long offset;
        int length;
        long block = -1;
        int generation;
        long t0;
        long t1;

        final BufferContent content; // fio's write data without verify (buffer_pattern, refill_buffers, ...)

        Unit(int index, MemorySegment buffer) {
            this.index = index;
            this.buffer = buffer;
            this.verifier = verifying ? new BlockVerifier(spec, verifyThread) : null;
            this.content = verifying ? null : new BufferContent(spec.buffers, spec.seed() * 31 + clone * 4099L + index);
            unitStats.add(dirs);
        }

        @Override
        public void accept(Void v, Throwable e) {
            if (complete(this, e)) {
                next(this);
            }
        }
    }

    @Override
    void start() {
        submitter = spec.pattern.offload ? new Submitter(name + "." + clone) : null;
        if (pacer != null || spec.latencyTargetNs > 0 || spec.startDelayNs > 0 || flow != null || MinRate.needed(spec)) {
            timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("bench-timer-" + name)
                    .factory());
        }
        MinRate.schedule(this, timer);
        if (spec.latencyTargetNs > 0) {
            latency = new LatencyTarget(spec, startNs);
        }
        long delay = startNs - System.nanoTime();
        if (delay > 0) {
            timer.schedule(this::startUnits, delay, TimeUnit.NANOSECONDS);
        } else {
            startUnits();
        }
    }

    private void startUnits() {
        if (batching != null) {
            refill(java.util.List.of(units));
            return;
        }
        for (Unit u : units) {
            next(u);
        }
    }

    /** iodepth_batch: prepares the released units, then submits them iodepth_batch at a time. */
    private void refill(java.util.List<Unit> go) {
        batching.prepared(go, this::prepare).forEach(b -> b.forEach(v -> {
            if (submitter != null ? handOver(v) : issue(v)) {
                next(v);
            }
        }));
    }

    private void next(Unit u) {
        while (prepare(u) && (submitter != null ? handOver(u) : issue(u))) {
            // the I/O completed at once: the unit goes on
        }
    }

    /** io_submit_mode=offload: the submitter thread issues the I/O (false: the unit goes on when it completes). */
    private boolean handOver(Unit u) {
        u.t0 = System.nanoTime();
        submitter.submit(() -> {
            if (issue(u)) {
                next(u);
            }
        });
        return false;
    }

    /** Issues the unit's prepared I/O; true when it completed at once and the unit goes on. */
    private boolean issue(Unit u) {
        MemorySegment data = u.buffer.asSlice(0, u.length);
        CompletableFuture<Void> f;
        inFlight.incrementAndGet();
        u.t0 = submitter != null ? u.t0 : System.nanoTime();
        try {
            f = u.isRead ? dev.read(u.offset, data) : u.isTrim ? dev.trim(u.offset, u.length) : dev.write(u.offset, data, false);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        u.t1 = System.nanoTime();
        if (!f.isDone()) {
            f.whenComplete(u);
            return false;
        }
        return complete(u, f.isCompletedExceptionally() ? f.exceptionNow() : null);
    }

    private boolean ended(long now) {
        return stop || latencyDone || (endNs != 0 && now - endNs >= 0);
    }

    /** Chooses the unit's next I/O; false when the unit has nothing more to do now (it waits, parked or finished). */
    private boolean prepare(Unit u) {
        if (verifyPhase) {
            return prepareVerify(u);
        }
        long now = System.nanoTime();
        if (u.pending) {
            u.pending = false;
            if (ended(now)) {
                releaseBlock(u);
                endMain(u);
                return false;
            }
            return !held(u, 0);
        }
        if (ended(now)) {
            endMain(u);
            return false;
        }
        LatencyTarget lt = latency;
        if (lt != null && inFlight.get() >= lt.depth()) {
            parked.add(u);
            if (inFlight.get() >= lt.depth() || !parked.remove(u)) {
                return false;
            }
        }
        if (prepareBacklog(u)) {
            return true;
        }
        IoChooser.Choice c = chooser.next();
        if (c == null || issuedBytes.addAndGet(c.lengthBytes()) > chooser.byteLimit()) {
            endMain(u);
            return false;
        }
        u.isRead = c.read();
        u.isTrim = c.trim();
        u.verifyRead = false;
        u.length = c.lengthBytes();
        u.offset = c.offsetBytes();
        u.block = -1;
        if (verifying) {
            for (int attempt = 0; ; attempt++) {
                long b = (u.offset - regionStart) / verifyBs;
                if (inFlightBlocks.add(b)) {
                    u.block = b;
                    break;
                }
                if (attempt > 64) {
                    break; // the region is smaller than the queue: this one is not verified
                }
                u.offset = chooser.another(c);
            }
            if (!u.isRead) {
                u.generation = state.newGeneration();
                u.verifier.fill(u.buffer.asSlice(0, u.length), u.offset, chooser.nextSeed(), u.generation);
            }
        } else {
            u.content.prepare(u.buffer.asSlice(0, u.length), u.offset, u.isRead);
        }
        return !held(u, pacer != null ? pacer.reserve(u.isRead, u.length, now) : 0);
    }

    /** Waits {@code waitNs} (rate, thinktime), else while the flow holds the I/O back; true when it waits. */
    private boolean held(Unit u, long waitNs) {
        long wait = waitNs > 0 || flow == null ? waitNs : flow.admit();
        wait = endNs == 0 ? wait : Math.min(wait, Math.max(1, endNs - System.nanoTime())); // a wait past the runtime ends it
        if (wait > 0) {
            u.pending = true;
            timer.schedule(() -> next(u), wait, TimeUnit.NANOSECONDS);
        }
        return wait > 0;
    }

    /** verify_backlog: once N acknowledged writes are pending, read them back before writing more. */
    private boolean prepareBacklog(Unit u) {
        long b = verifyReads.nextBacklog();
        return b >= 0 && inFlightBlocks.add(b) && verifyRead(u, b); // busy: being rewritten, the final pass checks it
    }

    /** Sets the unit to read back verify block {@code b}; true. */
    private boolean verifyRead(Unit u, long b) {
        u.isRead = true;
        u.isTrim = false;
        u.verifyRead = true;
        u.length = verifyBs;
        u.offset = regionStart + b * verifyBs;
        u.block = b;
        return true;
    }

    private void releaseBlock(Unit u) {
        if (u.block >= 0) {
            inFlightBlocks.remove(u.block);
            u.block = -1;
        }
    }

    private boolean prepareVerify(Unit u) {
        while (true) {
            long c = verifyReads.nextFinal(verifyBlocks);
            if (c < 0 || stop) {
                finishUnit();
                return false;
            }
            if (state.lastAcknowledged(c) > 0 && inFlightBlocks.add(c)) { // busy: another clone writes it, and checks it
                return verifyRead(u, c);
            }
        }
    }

    private boolean complete(Unit u, Throwable err) {
        long t2 = System.nanoTime();
        inFlight.decrementAndGet();
        if (u.block >= 0 && err == null && !u.isRead) {
            state.acknowledged(u.block, u.generation);
            verifyReads.written(u.block);
        }
        if (err != null) {
            releaseBlock(u);
            fail(err);
            if (verifyPhase) {
                finishUnit();
            } else {
                endMain(u);
                drainParked();
            }
            return false;
        }
        if (u.isRead && verifying && u.block >= 0) {
            check(u);
        }
        releaseBlock(u);
        if (!verifyPhase && !u.verifyRead && u.t0 - rampEndNs >= 0) {
            if (u.epoch != statsEpoch) {
                u.epoch = statsEpoch;
                u.dirs = new DirStats[] {new DirStats(), new DirStats(), new DirStats()};
                unitStats.set(u.index, u.dirs);
            }
            int d = u.isRead ? 0 : u.isTrim ? 2 : 1;
            u.dirs[d].record(u.t1 - u.t0, t2 - u.t1, u.length);
            if (logs != null) {
                logs.io(t2 - startNs, d, u.length, u.offset, u.t1 - u.t0, t2 - u.t1);
            }
            count(d, u.length);
        }
        if (latency != null && !verifyPhase && !u.verifyRead) {
            latencyEvent(latency.complete(t2 - u.t0, t2), t2 - u.t0, u);
        }
        if (batching != null && !verifyPhase) {
            refill(batching.completed(u, inFlight.get()));
            return false;
        }
        return true;
    }

    /** Checks a read of a verify block against its last acknowledged generation ({@link BlockVerifyState#check}). */
    private void check(Unit u) {
        String bad = BlockVerifyState.check(state, u.block, spec, stateLoaded, verifyThread, u.verifier,
                u.buffer.asSlice(0, u.length), u.offset);
        if (bad == null) {
            verifiedBlocks.increment();
        } else if (!bad.isEmpty()) {
            verifyFailed(bad);
        }
    }

    private void latencyEvent(LatencyTarget.Event e, long latNs, Unit u) {
        switch (e) {
            case NONE -> { }
            case DEPTH_CHANGED -> unpark();
            case RESET_STATS -> {
                statsEpoch++;
                rampEndNs = System.nanoTime();
                readOps.reset();
                writeOps.reset();
                readBytes.reset();
                writeBytes.reset();
                unpark();
            }
            case DONE -> {
                latencyDone = true;
                drainParked();
            }
            case FATAL -> {
                fail(new TimeoutException("latency of " + latNs + " nsec exceeds specified max ("
                        + latency.targetNs() + " nsec) at queue depth 1: " + (u.isRead ? "read" : "write")
                        + " offset " + u.offset + " length " + u.length));
                drainParked();
            }
        }
    }

    /** The queue depth the latency search settled on (its current depth while running), 0 without a target. */
    int latencyDepth() {
        return latency == null ? 0 : latency.depth();
    }

    /** True when the latency search found its depth (or there is no target). */
    boolean latencySettled() {
        return latency == null || latencyDone;
    }

    private void unpark() {
        LatencyTarget lt = latency;
        while (lt != null && inFlight.get() < lt.depth()) {
            Unit p = parked.poll();
            if (p == null) {
                return;
            }
            timer.execute(() -> next(p));
        }
    }

    private void drainParked() {
        Unit p;
        while ((p = parked.poll()) != null) {
            endMain(p);
        }
    }

    private void endMain(Unit u) {
        if (mainActive.decrementAndGet() != 0) {
            drainParked(); // a unit ends MAIN only when the job does (time, size, stop): parked units end too
            return;
        }
        mainEndNs = System.nanoTime();
        if (flow != null) {
            flow.leave();
        }
        if (verifying && spec.rw.writes && spec.doVerify && !stop) {
            verifyPhase = true;
            for (Unit v : units) {
                next(v);
            }
        } else {
            for (int i = 0; i < units.length; i++) {
                finishUnit();
            }
        }
    }

    /** Blocks never written, per the state (0 without verify). */
    long neverWritten() {
        return state == null ? 0 : state.neverWritten();
    }

    @Override
    void release() {
        if (timer != null) {
            timer.shutdownNow();
        }
        if (submitter != null) {
            submitter.stop();
        }
        for (Unit u : units) {
            dev.freeBuffer(u.buffer);
        }
    }
}
