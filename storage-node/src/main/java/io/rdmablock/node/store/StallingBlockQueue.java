package io.rdmablock.node.store;

import java.lang.foreign.MemorySegment;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link BlockQueue} that holds the READ/WRITE commands a {@link StoreFaults} rule matches for its delay, then
 * submits them to the backend queue as issued (a hung disk). Everything else passes straight through. Held commands
 * count as in flight; they are released by the owning thread's next {@link #submit}, {@link #reap} or
 * {@link #awaitCompletion} after their deadline, or at {@link #close} at once. Only created when a rule is installed.
 */
final class StallingBlockQueue implements BlockQueue {
    private static final Logger LOG = LoggerFactory.getLogger(StallingBlockQueue.class);

    private final BlockQueue inner;
    private final StoreFaults faults;
    private final boolean[] heldWrite;
    private final StoreVolume[] heldVolume;
    private final long[] heldOffset;
    private final MemorySegment[] heldBuf;
    private final boolean[] heldFua;
    private final long[] heldUserData;
    private final long[] heldUntilNs;
    private int held;

    StallingBlockQueue(BlockQueue inner, StoreFaults faults) {
        this.inner = inner;
        this.faults = faults;
        int n = inner.capacity();
        heldWrite = new boolean[n];
        heldVolume = new StoreVolume[n];
        heldOffset = new long[n];
        heldBuf = new MemorySegment[n];
        heldFua = new boolean[n];
        heldUserData = new long[n];
        heldUntilNs = new long[n];
    }

    @Override
    public void submitRead(StoreVolume volume, long offsetBytes, MemorySegment buf, long userData) {
        if (!hold(false, volume, offsetBytes, buf, false, userData)) {
            inner.submitRead(volume, offsetBytes, buf, userData);
        }
    }

    @Override
    public void submitWrite(StoreVolume volume, long offsetBytes, MemorySegment buf, boolean fua, long userData) {
        if (!hold(true, volume, offsetBytes, buf, fua, userData)) {
            inner.submitWrite(volume, offsetBytes, buf, fua, userData);
        }
    }

    @Override
    public void submitFlush(StoreVolume volume, long userData) {
        checkCapacity();
        inner.submitFlush(volume, userData);
    }

    @Override
    public void submitWriteZeroes(StoreVolume volume, long offsetBytes, long lengthBytes, long userData) {
        checkCapacity();
        inner.submitWriteZeroes(volume, offsetBytes, lengthBytes, userData);
    }

    @Override
    public void submitTrim(StoreVolume volume, long offsetBytes, long lengthBytes, long userData) {
        checkCapacity();
        inner.submitTrim(volume, offsetBytes, lengthBytes, userData);
    }

    @Override
    public void registerBuffers(MemorySegment... regions) {
        inner.registerBuffers(regions);
    }

    @Override
    public int submit() {
        release(false);
        return inner.submit();
    }

    @Override
    public int reap(long[] userData, int[] result, int max) {
        release(false);
        return inner.reap(userData, result, max);
    }

    @Override
    public boolean awaitCompletion(long timeoutNs) {
        release(false);
        if (held > 0) {
            long next = Long.MAX_VALUE;
            long now = System.nanoTime();
            for (int i = 0; i < held; i++) {
                next = Math.min(next, heldUntilNs[i] - now);
            }
            timeoutNs = Math.min(timeoutNs, Math.max(0, next));
            if (inner.inFlight() == 0) {
                // only held commands: the caller waits as on a hung disk (the timeout or the first one due), not
                // returns at once to wait again (a poller spinning on it took its neighbours' CPU)
                if (timeoutNs > 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(this, timeoutNs);
                }
                release(false);
                return inner.awaitCompletion(0);
            }
        }
        return inner.awaitCompletion(timeoutNs);
    }

    @Override
    public int capacity() {
        return inner.capacity();
    }

    @Override
    public int inFlight() {
        return inner.inFlight() + held;
    }

    @Override
    public IoBackend backend() {
        return inner.backend();
    }

    @Override
    public void close() {
        release(true);
        inner.close();
    }

    private boolean hold(boolean write, StoreVolume v, long offsetBytes, MemorySegment buf, boolean fua,
                         long userData) {
        checkCapacity();
        if (buf == null || v == null || !faults.take(v, offsetBytes, buf.byteSize())) {
            return false;
        }
        int i = held++;
        heldWrite[i] = write;
        heldVolume[i] = v;
        heldOffset[i] = offsetBytes;
        heldBuf[i] = buf;
        heldFua[i] = fua;
        heldUserData[i] = userData;
        heldUntilNs[i] = System.nanoTime() + faults.delayNs();
        LOG.warn("fault injection: holding {} volume={}, offsetBytes={}, lengthBytes={} for {} ms",
                write ? "WRITE" : "READ", v.id(), offsetBytes, buf.byteSize(), faults.delayNs() / 1_000_000L);
        return true;
    }

    private void release(boolean all) {
        if (held == 0) {
            return;
        }
        long now = System.nanoTime();
        for (int i = 0; i < held; i++) {
            if (all || now - heldUntilNs[i] >= 0) {
                StoreVolume v = heldVolume[i];
                LOG.warn("fault injection: releasing {} volume={}, offsetBytes={}", heldWrite[i] ? "WRITE" : "READ",
                        v.id(), heldOffset[i]);
                if (heldWrite[i]) {
                    inner.submitWrite(v, heldOffset[i], heldBuf[i], heldFua[i], heldUserData[i]);
                } else {
                    inner.submitRead(v, heldOffset[i], heldBuf[i], heldUserData[i]);
                }
                int last = --held;
                heldWrite[i] = heldWrite[last];
                heldVolume[i] = heldVolume[last];
                heldOffset[i] = heldOffset[last];
                heldBuf[i] = heldBuf[last];
                heldFua[i] = heldFua[last];
                heldUserData[i] = heldUserData[last];
                heldUntilNs[i] = heldUntilNs[last];
                heldVolume[last] = null;
                heldBuf[last] = null;
                i--;
            }
        }
    }

    private void checkCapacity() {
        if (inFlight() >= inner.capacity()) {
            throw new IllegalStateException("block queue full: inFlight=" + inFlight() + ", capacity="
                    + inner.capacity());
        }
    }
}
