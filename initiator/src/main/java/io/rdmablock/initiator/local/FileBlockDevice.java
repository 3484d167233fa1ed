package io.rdmablock.initiator.local;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.BlockIoException;
import io.rdmablock.initiator.DeviceLostException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link BlockDevice} over a local file: positional {@link FileChannel} reads and writes run on a fixed pool of
 * {@code threads} platform threads, so up to {@code threads} I/Os are in the kernel at once (the queue depth a
 * synchronous {@code pread}/{@code pwrite} pool can reach).
 *
 * <p>Shape: capacity is the file size at open, rounded down to a multiple of {@code lbaSize} (512 or 4096). With
 * {@code direct} the file is opened {@code O_DIRECT} ({@code com.sun.nio.file.ExtendedOpenOption.DIRECT}): buffers
 * from {@link #allocateBuffer} are 4096-aligned and go straight to the disk; other native segments that are not
 * 4096-aligned are staged through a temporary aligned buffer. FLUSH and FUA use {@code fdatasync}
 * ({@code FileChannel.force(false)}). TRIM is a hint that does nothing ({@link #zeroesAfterTrim()} is false);
 * WRITE ZEROES writes zeroes.
 *
 * <p>Errors: bad offsets/lengths fail the future with {@link IllegalArgumentException}; an {@link IOException} from
 * the file fails it with {@link BlockIoException}; I/O after {@link #close()} fails with {@link DeviceLostException}.
 */
public final class FileBlockDevice implements BlockDevice {

    /** Alignment of buffers from {@link #allocateBuffer} and the O_DIRECT requirement for staging. */
    public static final int BUFFER_ALIGNMENT = 4096;
    private static final int ZERO_CHUNK_BYTES = 1 << 20;
    private static final int MAX_TRANSFER_BYTES = 1 << 20;

    private final Path path;
    private final FileChannel channel;
    private final long capacityBytes;
    private final int lbaSize;
    private final boolean direct;
    private final ExecutorService executor;
    private final Map<Long, Arena> buffers = new ConcurrentHashMap<>();
    private final Arena zeroArena = Arena.ofShared();
    private final MemorySegment zeroes;
    private volatile boolean closed;

    /**
     * Opens {@code path} (which must exist) as a block device.
     *
     * @param lbaSize 512 or 4096
     * @param direct  open with O_DIRECT (bypass the page cache)
     * @param threads I/O threads, 1..1024: the maximum number of I/Os in flight in the kernel
     * @throws IllegalArgumentException on a bad lbaSize/threads or a file smaller than one LBA
     * @throws BlockIoException         if the file cannot be opened
     */
    public FileBlockDevice(Path path, int lbaSize, boolean direct, int threads) {
        if (lbaSize != 512 && lbaSize != 4096) {
            throw new IllegalArgumentException("invalid lbaSize: lbaSize=" + lbaSize + ", allowed=512|4096");
        }
        if (threads < 1 || threads > 1024) {
            throw new IllegalArgumentException("invalid threads: threads=" + threads + ", min=1, max=1024");
        }
        this.path = path;
        this.lbaSize = lbaSize;
        this.direct = direct;
        List<OpenOption> options = new ArrayList<>(List.of(StandardOpenOption.READ, StandardOpenOption.WRITE));
        if (direct) {
            options.add(com.sun.nio.file.ExtendedOpenOption.DIRECT);
        }
        try {
            this.channel = FileChannel.open(path, options.toArray(OpenOption[]::new));
            this.capacityBytes = channel.size() / lbaSize * lbaSize;
        } catch (IOException e) {
            throw new BlockIoException("open failed: path=" + path + ", direct=" + direct + ": " + e, e);
        }
        if (capacityBytes == 0) {
            close();
            throw new IllegalArgumentException("invalid file: path=" + path + " is smaller than one LBA (" + lbaSize + ")");
        }
        this.zeroes = zeroArena.allocate(ZERO_CHUNK_BYTES, BUFFER_ALIGNMENT);
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "file-bdev-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Creates (or truncates/extends) {@code path} to {@code sizeBytes} (sparse). */
    public static void createFile(Path path, long sizeBytes) {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            if (ch.size() > sizeBytes) {
                ch.truncate(sizeBytes);
            } else if (ch.size() < sizeBytes) {
                ch.write(ByteBuffer.wrap(new byte[1]), sizeBytes - 1);
            }
        } catch (IOException e) {
            throw new BlockIoException("create failed: path=" + path + ", sizeBytes=" + sizeBytes + ": " + e, e);
        }
    }

    public Path path() {
        return path;
    }

    @Override
    public long capacityBytes() {
        return capacityBytes;
    }

    @Override
    public String lossReason() {
        return closed ? "device closed: path=" + path : null;
    }

    @Override
    public int lbaSize() {
        return lbaSize;
    }

    @Override
    public int maxTransferBytes() {
        return MAX_TRANSFER_BYTES;
    }

    @Override
    public boolean zeroesAfterTrim() {
        return false;
    }

    @Override
    public CompletableFuture<Void> read(long offsetBytes, MemorySegment dst) {
        String bad = checkBuffer(dst);
        if (bad == null) {
            bad = checkRange(offsetBytes, dst.byteSize());
        }
        if (bad != null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(bad));
        }
        return submit(() -> transfer(offsetBytes, dst, false));
    }

    @Override
    public CompletableFuture<Void> write(long offsetBytes, MemorySegment src, boolean fua) {
        String bad = checkBuffer(src);
        if (bad == null) {
            bad = checkRange(offsetBytes, src.byteSize());
        }
        if (bad != null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(bad));
        }
        return submit(() -> {
            transfer(offsetBytes, src, true);
            if (fua) {
                channel.force(false);
            }
        });
    }

    @Override
    public CompletableFuture<Void> flush() {
        return submit(() -> channel.force(false));
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offsetBytes, long lengthBytes) {
        String bad = checkRange(offsetBytes, lengthBytes);
        if (bad != null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(bad));
        }
        return submit(() -> {
            long done = 0;
            while (done < lengthBytes) {
                long n = Math.min(ZERO_CHUNK_BYTES, lengthBytes - done);
                transfer(offsetBytes + done, zeroes.asSlice(0, n), true);
                done += n;
            }
        });
    }

    @Override
    public CompletableFuture<Void> trim(long offsetBytes, long lengthBytes) {
        String bad = checkRange(offsetBytes, lengthBytes);
        if (bad != null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(bad));
        }
        return closed ? CompletableFuture.failedFuture(lost()) : CompletableFuture.completedFuture(null);
    }

    @Override
    public MemorySegment allocateBuffer(long lengthBytes) {
        if (lengthBytes <= 0 || lengthBytes > (1L << 30)) {
            throw new IllegalArgumentException("invalid buffer: lengthBytes=" + lengthBytes + ", min=1, max=1073741824");
        }
        Arena arena = Arena.ofShared();
        MemorySegment seg = arena.allocate(lengthBytes, BUFFER_ALIGNMENT);
        buffers.put(seg.address(), arena);
        return seg;
    }

    @Override
    public void freeBuffer(MemorySegment buffer) {
        Arena arena = buffers.remove(buffer.address());
        if (arena == null) {
            throw new IllegalArgumentException("invalid buffer: address=0x" + Long.toHexString(buffer.address())
                    + " was not allocated by this device");
        }
        arena.close();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (executor != null) {
            executor.shutdown();
            try {
                executor.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            channel.close();
        } catch (IOException | RuntimeException ignored) {
            // closing a file we only read/wrote: nothing to recover
        }
        // buffers handed out stay valid until freed by their owner; the zero chunk is ours
        if (zeroArena.scope().isAlive()) {
            zeroArena.close();
        }
    }

    private interface IoTask {
        void run() throws IOException;
    }

    private CompletableFuture<Void> submit(IoTask task) {
        if (closed) {
            return CompletableFuture.failedFuture(lost());
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                try {
                    task.run();
                    f.complete(null);
                } catch (IOException | RuntimeException e) {
                    f.completeExceptionally(closed ? lost() : new BlockIoException("file I/O failed: path=" + path + ": " + e, e));
                }
            });
        } catch (RejectedExecutionException e) {
            f.completeExceptionally(lost());
        }
        return f;
    }

    private DeviceLostException lost() {
        return new DeviceLostException("device closed: path=" + path);
    }

    private void transfer(long offsetBytes, MemorySegment seg, boolean write) throws IOException {
        if (direct && seg.address() % BUFFER_ALIGNMENT != 0) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment bounce = a.allocate(seg.byteSize(), BUFFER_ALIGNMENT);
                if (write) {
                    bounce.copyFrom(seg);
                    transferAligned(offsetBytes, bounce, true);
                } else {
                    transferAligned(offsetBytes, bounce, false);
                    seg.copyFrom(bounce);
                }
            }
            return;
        }
        transferAligned(offsetBytes, seg, write);
    }

    private void transferAligned(long offsetBytes, MemorySegment seg, boolean write) throws IOException {
        ByteBuffer bb = seg.asByteBuffer();
        long pos = offsetBytes;
        while (bb.hasRemaining()) {
            int n = write ? channel.write(bb, pos) : channel.read(bb, pos);
            if (n < 0) {
                throw new IOException("unexpected end of file at " + pos);
            }
            pos += n;
        }
    }

    private static String checkBuffer(MemorySegment seg) {
        if (!seg.isNative()) {
            return "invalid buffer: heap segments are not accepted, use allocateBuffer or a native segment";
        }
        return null;
    }

    private String checkRange(long offsetBytes, long lengthBytes) {
        if (offsetBytes < 0 || lengthBytes < 0 || offsetBytes % lbaSize != 0 || lengthBytes % lbaSize != 0) {
            return "invalid range: offsetBytes=" + offsetBytes + ", lengthBytes=" + lengthBytes
                    + ", both must be non-negative multiples of lbaSize=" + lbaSize;
        }
        if (lengthBytes > capacityBytes || offsetBytes > capacityBytes - lengthBytes) {
            return "invalid range: offsetBytes=" + offsetBytes + ", lengthBytes=" + lengthBytes
                    + ", capacityBytes=" + capacityBytes;
        }
        return null;
    }
}
