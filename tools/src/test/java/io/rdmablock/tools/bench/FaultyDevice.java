package io.rdmablock.tools.bench;

import io.rdmablock.initiator.BlockDevice;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test hook below the device: wraps a {@link BlockDevice} and, for the n-th write (1-based, counted over this
 * wrapper), either acknowledges it without writing ({@link Fault#DROP}, a lost write) or flips one byte of its data
 * on the way ({@link Fault#ALTER}, corruption in flight; the caller's buffer is left as it was). Optional delay per
 * I/O in microseconds, proportional to the I/Os in flight ({@code delayUsPerInFlight}), for the latency search.
 */
public final class FaultyDevice implements BlockDevice {
    public enum Fault { NONE, DROP, ALTER }

    private final BlockDevice d;
    private final Fault fault;
    private final int nth;
    private final AtomicInteger writes = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final long delayUsPerInFlight;
    public volatile long faultedOffset = -1;

    public FaultyDevice(BlockDevice d, Fault fault, int nth, long delayUsPerInFlight) {
        this.d = d;
        this.fault = fault;
        this.nth = nth;
        this.delayUsPerInFlight = delayUsPerInFlight;
    }

    @Override
    public long capacityBytes() {
        return d.capacityBytes();
    }

    @Override
    public int lbaSize() {
        return d.lbaSize();
    }

    @Override
    public int maxTransferBytes() {
        return d.maxTransferBytes();
    }

    @Override
    public boolean zeroesAfterTrim() {
        return d.zeroesAfterTrim();
    }

    private <T> CompletableFuture<T> delayed(java.util.function.Supplier<CompletableFuture<T>> io) {
        if (delayUsPerInFlight == 0) {
            return io.get();
        }
        int n = inFlight.incrementAndGet();
        return io.get().thenCompose(v -> {
            CompletableFuture<T> f = new CompletableFuture<>();
            CompletableFuture.delayedExecutor(delayUsPerInFlight * n, java.util.concurrent.TimeUnit.MICROSECONDS, Runnable::run)
                    .execute(() -> {
                        inFlight.decrementAndGet();
                        f.complete(v);
                    });
            return f;
        });
    }

    @Override
    public CompletableFuture<Void> read(long offsetBytes, MemorySegment dst) {
        return delayed(() -> d.read(offsetBytes, dst));
    }

    @Override
    public CompletableFuture<Void> write(long offsetBytes, MemorySegment src, boolean fua) {
        int n = writes.incrementAndGet();
        if (n == nth && fault == Fault.DROP) {
            faultedOffset = offsetBytes;
            return CompletableFuture.completedFuture(null);
        }
        if (n == nth && fault == Fault.ALTER) {
            faultedOffset = offsetBytes;
            MemorySegment copy = d.allocateBuffer(src.byteSize());
            copy.copyFrom(src);
            long at = src.byteSize() / 2;
            copy.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, (byte) ~copy.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at));
            return d.write(offsetBytes, copy, fua).whenComplete((v, e) -> d.freeBuffer(copy));
        }
        return delayed(() -> d.write(offsetBytes, src, fua));
    }

    @Override
    public CompletableFuture<Void> flush() {
        return d.flush();
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offsetBytes, long lengthBytes) {
        return d.writeZeroes(offsetBytes, lengthBytes);
    }

    @Override
    public CompletableFuture<Void> trim(long offsetBytes, long lengthBytes) {
        return d.trim(offsetBytes, lengthBytes);
    }

    @Override
    public MemorySegment allocateBuffer(long lengthBytes) {
        return d.allocateBuffer(lengthBytes);
    }

    @Override
    public void freeBuffer(MemorySegment buffer) {
        d.freeBuffer(buffer);
    }

    @Override
    public void close() {
        d.close();
    }
}
