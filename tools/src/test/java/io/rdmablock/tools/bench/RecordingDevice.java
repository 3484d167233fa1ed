package io.rdmablock.tools.bench;

import io.rdmablock.initiator.BlockDevice;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test hook below the device: wraps a {@link BlockDevice} and records every read and write as it is submitted
 * (time in {@link System#nanoTime()} ns, the submitting thread's name, direction, offset and length in bytes), and the
 * most I/Os it had in flight at once. One recorder may be shared by the devices of several clones.
 */
final class RecordingDevice implements BlockDevice {
    /** One submitted I/O. */
    record Io(long timeNs, String thread, boolean read, long offset, long length, boolean trim) {
        Io(long timeNs, String thread, boolean read, long offset, long length) {
            this(timeNs, thread, read, offset, length, false);
        }
    }

    final List<Io> ios;
    final AtomicInteger maxInFlight;
    private final AtomicInteger inFlight;
    private final BlockDevice d;

    RecordingDevice(BlockDevice d) {
        this(d, Collections.synchronizedList(new ArrayList<>()), new AtomicInteger(), new AtomicInteger());
    }

    private RecordingDevice(BlockDevice d, List<Io> ios, AtomicInteger inFlight, AtomicInteger max) {
        this.d = d;
        this.ios = ios;
        this.inFlight = inFlight;
        this.maxInFlight = max;
    }

    /** Another device recording into the same list (for another clone). */
    RecordingDevice sharing(BlockDevice other) {
        return new RecordingDevice(other, ios, inFlight, maxInFlight);
    }

    /** The offsets recorded, in submission order. */
    List<Long> offsets() {
        synchronized (ios) {
            return ios.stream().map(Io::offset).toList();
        }
    }

    private CompletableFuture<Void> track(boolean read, long offset, long length,
                                          java.util.function.Supplier<CompletableFuture<Void>> io) {
        return track(read, false, offset, length, io);
    }

    private CompletableFuture<Void> track(boolean read, boolean trim, long offset, long length,
                                          java.util.function.Supplier<CompletableFuture<Void>> io) {
        ios.add(new Io(System.nanoTime(), Thread.currentThread().getName(), read, offset, length, trim));
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        return io.get().whenComplete((v, e) -> inFlight.decrementAndGet());
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

    @Override
    public CompletableFuture<Void> read(long offsetBytes, MemorySegment dst) {
        return track(true, offsetBytes, dst.byteSize(), () -> d.read(offsetBytes, dst));
    }

    @Override
    public CompletableFuture<Void> write(long offsetBytes, MemorySegment src, boolean fua) {
        return track(false, offsetBytes, src.byteSize(), () -> d.write(offsetBytes, src, fua));
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
        return track(false, true, offsetBytes, lengthBytes, () -> d.trim(offsetBytes, lengthBytes));
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
