package io.rdmablock.initiator.bench;

import io.rdmablock.initiator.BlockDevice;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BiConsumer;

/**
 * One job clone: {@code iodepth} I/O units on one device (one queue pair), each driven from its own completion
 * callback (run to completion: the thread that completes an I/O submits the next one, no hand-off, no lock).
 *
 * <p>Phases: MAIN runs the workload until {@code runtime} elapses (after {@code ramp_time}), or, unless
 * {@code time_based}, until {@code size} bytes were issued; completions that started before the ramp ended are not
 * recorded. With {@code verify} and writes, a VERIFY phase then reads back every block written (not recorded in the
 * statistics). Reads during MAIN check blocks that were written by this clone (or every block for read-only jobs,
 * which verify data written by an earlier job). A block is never in flight twice at once when verifying.
 * The first I/O error stops the clone (fio without continue_on_error).
 */
final class Worker extends Job {
    private final BlockDevice dev;
    private final long regionStart;
    private final long regionLength;
    private final Unit[] units;
    private final AtomicLong seq = new AtomicLong();
    private final AtomicLong issuedBytes = new AtomicLong();
    private final AtomicInteger mainActive;
    private final boolean verifying;
    private final int verifyBs;
    private final AtomicLongArray written;
    private final Set<Long> inFlightBlocks;
    private final AtomicLong verifyCursor = new AtomicLong();
    private final long verifyBlocks;
    private volatile boolean verifyPhase;
    private final int[] splitBs;
    private final int[] splitCumPct; // cumulative, in 1/100 percent

    Worker(JobSpec spec, String name, BlockDevice dev, long seed) {
        super(spec, name, spec.iodepth);
        this.dev = dev;
        this.regionStart = spec.regionOffset(dev.capacityBytes(), dev.lbaSize());
        this.regionLength = spec.regionLength(dev.capacityBytes(), dev.lbaSize());
        int lba = dev.lbaSize();
        check(spec.bsRead, lba);
        check(spec.bsWrite, lba);
        splitBs = new int[spec.bssplit.size()];
        splitCumPct = new int[spec.bssplit.size()];
        int cum = 0;
        for (int i = 0; i < splitBs.length; i++) {
            splitBs[i] = spec.bssplit.get(i).bs();
            check(splitBs[i], lba);
            cum += (int) Math.round(spec.bssplit.get(i).percent() * 100);
            splitCumPct[i] = i == splitBs.length - 1 ? 10_000 : cum;
        }
        this.verifying = spec.verify != JobSpec.Verify.NONE;
        this.verifyBs = spec.bsWrite;
        this.verifyBlocks = regionLength / verifyBs;
        this.written = verifying && spec.rw.writes ? new AtomicLongArray((int) ((verifyBlocks + 63) / 64)) : null;
        this.inFlightBlocks = verifying ? ConcurrentHashMap.newKeySet() : null;
        this.mainActive = new AtomicInteger(spec.iodepth);
        this.units = new Unit[spec.iodepth];
        SplittableRandom root = new SplittableRandom(seed);
        int maxBs = spec.maxBlockSize();
        for (int i = 0; i < units.length; i++) {
            units[i] = new Unit(dev.allocateBuffer(maxBs), root.split());
        }
    }

    private static void check(int bs, int lba) {
        if (bs % lba != 0) {
            throw new IllegalArgumentException("invalid bs: bs=" + bs + " is not a multiple of the LBA size " + lba);
        }
    }

    long regionStart() {
        return regionStart;
    }

    long regionLength() {
        return regionLength;
    }

    private final class Unit implements BiConsumer<Void, Throwable> {
        final MemorySegment buffer;
        final SplittableRandom rng;
        final BlockVerifier verifier;
        final DirStats read;
        final DirStats write;
        boolean isRead;
        long offset;
        int length;
        long block = -1;
        long t0;
        long t1;

        Unit(MemorySegment buffer, SplittableRandom rng) {
            this.buffer = buffer;
            this.rng = rng;
            this.verifier = verifying ? new BlockVerifier(spec.verify, spec.verifyPattern) : null;
            this.read = new DirStats();
            this.write = new DirStats();
            unitStats.add(new DirStats[] {read, write});
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
        for (Unit u : units) {
            next(u);
        }
    }

    private void next(Unit u) {
        while (true) {
            if (!prepare(u)) {
                return;
            }
            MemorySegment data = u.buffer.asSlice(0, u.length);
            CompletableFuture<Void> f;
            u.t0 = System.nanoTime();
            try {
                f = u.isRead ? dev.read(u.offset, data) : dev.write(u.offset, data, false);
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            u.t1 = System.nanoTime();
            if (!f.isDone()) {
                f.whenComplete(u);
                return;
            }
            Throwable err = f.isCompletedExceptionally() ? f.exceptionNow() : null;
            if (!complete(u, err)) {
                return;
            }
        }
    }

    /** Chooses the unit's next I/O; false when the unit has nothing more to do (it parked or finished). */
    private boolean prepare(Unit u) {
        if (verifyPhase) {
            return prepareVerify(u);
        }
        long now = System.nanoTime();
        if (stop || (endNs != 0 && now - endNs >= 0)) {
            endMain(u);
            return false;
        }
        u.isRead = spec.rw == JobSpec.Rw.RW || spec.rw == JobSpec.Rw.RANDRW
                ? u.rng.nextInt(100) < spec.rwmixread : spec.rw.reads;
        u.length = chooseBs(u);
        if (!spec.timeBased && issuedBytes.addAndGet(u.length) > regionLength) {
            endMain(u);
            return false;
        }
        for (int attempt = 0; ; attempt++) {
            u.offset = chooseOffset(u);
            if (!verifying) {
                break;
            }
            u.block = (u.offset - regionStart) / verifyBs;
            if (inFlightBlocks.add(u.block)) {
                break;
            }
            if (attempt > 64) {
                u.block = -1; // the region is smaller than the queue: give up verifying this one
                break;
            }
        }
        if (!u.isRead && verifying) {
            u.verifier.fill(u.buffer.asSlice(0, u.length), u.offset, u.rng.nextLong());
        }
        return true;
    }

    private boolean prepareVerify(Unit u) {
        while (true) {
            long c = verifyCursor.getAndIncrement();
            if (c >= verifyBlocks || stop) {
                finishUnit();
                return false;
            }
            if (isWritten(c)) {
                u.isRead = true;
                u.length = verifyBs;
                u.offset = regionStart + c * verifyBs;
                u.block = -1; // nothing else is in flight now
                return true;
            }
        }
    }

    private int chooseBs(Unit u) {
        if (splitBs.length == 0) {
            return u.isRead ? spec.bsRead : spec.bsWrite;
        }
        int r = u.rng.nextInt(10_000);
        for (int i = 0; i < splitBs.length; i++) {
            if (r < splitCumPct[i]) {
                return splitBs[i];
            }
        }
        return splitBs[splitBs.length - 1];
    }

    private long chooseOffset(Unit u) {
        if (spec.rw.random) {
            long blocks = regionLength / u.length;
            return regionStart + u.rng.nextLong(blocks) * u.length;
        }
        long pos = seq.getAndAdd(u.length) % regionLength;
        if (pos + u.length > regionLength) {
            pos = 0;
        }
        return regionStart + pos;
    }

    private boolean complete(Unit u, Throwable err) {
        long t2 = System.nanoTime();
        if (u.block >= 0) {
            if (err == null && !u.isRead && written != null) {
                setWritten(u.block);
            }
            inFlightBlocks.remove(u.block);
        }
        if (err != null) {
            fail(err);
            if (verifyPhase) {
                finishUnit();
            } else {
                endMain(u);
            }
            return false;
        }
        if (u.isRead && verifying && (verifyPhase || !spec.rw.writes || (u.block >= 0 && isWritten(u.block)))) {
            String bad = u.verifier.check(u.buffer.asSlice(0, u.length), u.offset);
            if (bad != null) {
                verifyFailed(bad);
            } else {
                verifiedBlocks.increment();
            }
        }
        if (!verifyPhase && u.t0 - rampEndNs >= 0) {
            (u.isRead ? u.read : u.write).record(u.t1 - u.t0, t2 - u.t1, u.length);
            (u.isRead ? readOps : writeOps).increment();
            (u.isRead ? readBytes : writeBytes).add(u.length);
        }
        return true;
    }

    private void endMain(Unit u) {
        if (mainActive.decrementAndGet() != 0) {
            return;
        }
        mainEndNs = System.nanoTime();
        if (written != null && spec.doVerify && !stop) {
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

    private boolean isWritten(long block) {
        if (written == null) {
            return false;
        }
        return (written.get((int) (block >>> 6)) & (1L << (block & 63))) != 0;
    }

    private void setWritten(long block) {
        int i = (int) (block >>> 6);
        long bit = 1L << (block & 63);
        long v;
        do {
            v = written.get(i);
        } while ((v & bit) == 0 && !written.compareAndSet(i, v, v | bit));
    }

    @Override
    void release() {
        for (Unit u : units) {
            dev.freeBuffer(u.buffer);
        }
    }
}
