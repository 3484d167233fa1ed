package io.rdmablock.tools.nbd;

import static io.rdmablock.tools.nbd.NbdProtocol.*;

import io.rdmablock.initiator.BlockDevice;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transmission phase of one NBD connection (proto.md "Transmission").
 *
 * <p>Threads: the calling thread reads requests and submits them to the device; one writer thread sends replies,
 * several per gathering {@code write}. A request holds one of {@code depth} preallocated {@link NbdSlot}s from the
 * moment its header is parsed until its reply is written; with every slot busy the reader stops reading (back
 * pressure through TCP). Hand-offs go through lock-free {@link SlotStack}s: no lock per I/O.
 *
 * <p>Payload copies: READ data goes from the device into the slot's registered buffer and from there to the socket;
 * WRITE data is read from the socket into the slot's buffer, except the part of it that arrived in the same
 * {@code read} as its header (a 64 KiB header buffer batches pipelined requests into one system call), which is
 * copied once.
 *
 * <p>Validation (each answered with the request's cookie, the connection stays): unknown command or flag, DF (no
 * structured replies), misaligned offset/length (minimum block = LBA size) -> EINVAL; range past the end -> EINVAL
 * (ENOSPC for WRITE and WRITE_ZEROES); READ/WRITE longer than the maximum payload -> EOVERFLOW (a WRITE's payload is
 * read and discarded); writes to a read-only export -> EPERM; zero-length READ/WRITE/TRIM/WRITE_ZEROES inside
 * {@code [0, size]} -> success without touching the device (C12). A bad request magic ends the connection.
 * Disconnect (DISC, EOF, error) waits for requests in flight before the buffers are released.
 */
final class NbdConnection {
    private static final Logger LOG = LoggerFactory.getLogger(NbdConnection.class);
    private static final int IN_BUFFER_BYTES = 64 * 1024;
    private static final int MAX_BATCH = 64;
    private static final long DRAIN_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);
    /**
     * Runs the FLUSH that follows a FUA TRIM/WRITE_ZEROES (the device has no FUA for those): never on the device's
     * completion thread, where a submit that waits for a free queue slot could wait for itself.
     */
    private static final java.util.concurrent.Executor AUX = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();

    private final SocketChannel ch;
    private final NbdExport export;
    private final BlockDevice device;
    private final String peer;
    private final NbdSlot[] slots;
    private final int slotBytes;
    private final SlotStack free = new SlotStack();
    private final SlotStack ready = new SlotStack();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final ByteBuffer in = ByteBuffer.allocateDirect(IN_BUFFER_BYTES).order(ByteOrder.BIG_ENDIAN);
    private final ByteBuffer[] gather = new ByteBuffer[2 * MAX_BATCH];
    private final long capacityBytes;
    private final int lbaSize;
    private volatile boolean stopping;
    private volatile boolean broken;
    private Thread writer;

    NbdConnection(SocketChannel ch, NbdExport export, String peer, int depth, int slotBytes) {
        this.ch = ch;
        this.export = export;
        this.device = export.device();
        this.peer = peer;
        this.slotBytes = slotBytes;
        this.capacityBytes = device.capacityBytes();
        this.lbaSize = device.lbaSize();
        this.slots = new NbdSlot[depth];
        try {
            for (int i = 0; i < depth; i++) {
                slots[i] = new NbdSlot(device.allocateBuffer(slotBytes));
                free.push(slots[i]);
            }
        } catch (RuntimeException e) {
            for (NbdSlot s : slots) {
                if (s != null) {
                    device.freeBuffer(s.buffer);
                }
            }
            throw e;
        }
        in.flip(); // empty, ready for reading
    }

    /** Runs until DISC, EOF, a protocol violation or the channel is closed; then drains and releases. */
    void run() {
        writer = Thread.ofPlatform().name("nbd-tx-" + peer).daemon().start(this::writeLoop);
        try {
            readLoop();
        } catch (EOFException e) {
            LOG.debug("nbd {}: client closed", peer);
        } catch (IOException e) {
            LOG.debug("nbd {}: read failed: {}", peer, e.toString());
        } catch (RuntimeException e) {
            LOG.warn("nbd {}: reader failed", peer, e);
        } finally {
            shutdown();
        }
    }

    private void readLoop() throws IOException {
        while (true) {
            fill(REQUEST_BYTES);
            int magic = in.getInt();
            int flags = Short.toUnsignedInt(in.getShort());
            int type = Short.toUnsignedInt(in.getShort());
            long cookie = in.getLong();
            long offset = in.getLong();
            int length = in.getInt();
            if (magic != REQUEST_MAGIC) {
                LOG.info("nbd {}: bad request magic 0x{}: closing", peer, Integer.toHexString(magic));
                return;
            }
            if (type == CMD_DISC) {
                LOG.debug("nbd {}: DISC", peer);
                return;
            }
            NbdSlot slot = takeSlot();
            slot.cookie = cookie;
            slot.type = type;
            slot.lengthBytes = length;
            slot.error = 0;
            long lengthBytes = Integer.toUnsignedLong(length);
            int error = validate(type, flags, offset, lengthBytes);
            if (type == CMD_WRITE) {
                if (error != 0) {
                    skip(lengthBytes);
                    complete(slot, error);
                    continue;
                }
                attach(slot, (int) lengthBytes);
                readPayload(slot);
            } else if (error == 0 && type == CMD_READ) {
                attach(slot, (int) lengthBytes);
            }
            if (error != 0 || lengthBytes == 0 && type != CMD_FLUSH) {
                complete(slot, error);
                continue;
            }
            submit(slot, type, flags, offset, lengthBytes);
        }
    }

    /** Returns the NBD error for a request that must not reach the device, or 0. */
    private int validate(int type, int flags, long offset, long lengthBytes) {
        int allowed = switch (type) {
            case CMD_READ, CMD_FLUSH, CMD_WRITE, CMD_TRIM -> CMD_FLAG_FUA;
            case CMD_WRITE_ZEROES -> CMD_FLAG_FUA | CMD_FLAG_NO_HOLE;
            default -> -1;
        };
        if (allowed < 0 || (flags & ~allowed) != 0) {
            return EINVAL; // unknown command, or a flag not documented for it (DF: no structured replies)
        }
        boolean writes = type != CMD_READ && type != CMD_FLUSH;
        if (writes && export.readOnly()) {
            return EPERM;
        }
        if (type == CMD_FLUSH) {
            return 0; // offset and length are reserved; do not reject clients that fill them
        }
        if ((type == CMD_READ || type == CMD_WRITE) && lengthBytes > export.maxPayloadBytes()) {
            return EOVERFLOW;
        }
        if (offset % lbaSize != 0 || lengthBytes % lbaSize != 0) {
            return EINVAL;
        }
        if (offset < 0 || offset > capacityBytes || lengthBytes > capacityBytes - offset) {
            return type == CMD_WRITE || type == CMD_WRITE_ZEROES ? ENOSPC : EINVAL;
        }
        return 0;
    }

    private void submit(NbdSlot slot, int type, int flags, long offset, long lengthBytes) {
        boolean fua = (flags & CMD_FLAG_FUA) != 0;
        CompletableFuture<Void> f;
        try {
            f = switch (type) {
                case CMD_READ -> device.read(offset, slot.data);
                case CMD_WRITE -> device.write(offset, slot.data, fua);
                case CMD_FLUSH -> device.flush();
                case CMD_TRIM -> fua ? device.trim(offset, lengthBytes).thenComposeAsync(v -> device.flush(), AUX)
                        : device.trim(offset, lengthBytes);
                case CMD_WRITE_ZEROES -> fua
                        ? device.writeZeroes(offset, lengthBytes).thenComposeAsync(v -> device.flush(), AUX)
                        : device.writeZeroes(offset, lengthBytes);
                default -> throw new IllegalStateException("unreachable: type=" + type);
            };
        } catch (RuntimeException e) {
            complete(slot, NbdErrors.of(e));
            return;
        }
        f.whenComplete((v, e) -> complete(slot, e == null ? 0 : NbdErrors.of(e)));
    }

    private void complete(NbdSlot slot, int error) {
        slot.error = error;
        ready.push(slot);
    }

    private NbdSlot takeSlot() {
        NbdSlot s = free.pop();
        while (s == null) {
            free.await(TimeUnit.MILLISECONDS.toNanos(100));
            s = free.pop();
        }
        inFlight.incrementAndGet();
        return s;
    }

    private void attach(NbdSlot slot, int lengthBytes) {
        if (lengthBytes <= slotBytes) {
            slot.data = slot.buffer.asSlice(0, lengthBytes);
            slot.dataView = slot.bufferView.clear().limit(lengthBytes);
            return;
        }
        MemorySegment big;
        try {
            big = device.allocateBuffer(lengthBytes);
            slot.largeFromDevice = true;
        } catch (IllegalArgumentException e) {
            slot.largeArena = Arena.ofShared();
            big = slot.largeArena.allocate(lengthBytes, 4096);
        }
        slot.data = big;
        slot.dataView = big.asByteBuffer();
    }

    private void release(NbdSlot slot) {
        if (slot.largeFromDevice) {
            device.freeBuffer(slot.data);
            slot.largeFromDevice = false;
        } else if (slot.largeArena != null) {
            slot.largeArena.close();
            slot.largeArena = null;
        }
        slot.data = null;
        slot.dataView = null;
    }

    private void readPayload(NbdSlot slot) throws IOException {
        ByteBuffer dst = slot.dataView;
        int buffered = Math.min(in.remaining(), dst.remaining());
        if (buffered > 0) {
            ByteBuffer part = in.slice(in.position(), buffered);
            dst.put(part);
            in.position(in.position() + buffered);
        }
        while (dst.hasRemaining()) {
            if (ch.read(dst) < 0) {
                throw new EOFException("client closed during WRITE payload");
            }
        }
        dst.flip();
    }

    private void skip(long n) throws IOException {
        while (n > 0) {
            if (!in.hasRemaining()) {
                fill(1);
            }
            int k = (int) Math.min(n, in.remaining());
            in.position(in.position() + k);
            n -= k;
        }
    }

    /** Ensures {@code n} bytes are buffered in {@link #in}, reading as much as is available. */
    private void fill(int n) throws IOException {
        if (in.remaining() >= n) {
            return;
        }
        in.compact();
        while (in.position() < n) {
            if (ch.read(in) < 0) {
                throw new EOFException("client closed");
            }
        }
        in.flip();
    }

    private void writeLoop() {
        while (true) {
            NbdSlot batch = ready.popAll();
            if (batch == null) {
                if (stopping && inFlight.get() == 0) {
                    return;
                }
                ready.await(TimeUnit.MILLISECONDS.toNanos(100));
                continue;
            }
            while (batch != null) {
                int n = 0;
                int slotCount = 0;
                NbdSlot first = batch;
                while (batch != null && slotCount < MAX_BATCH) {
                    gather[n++] = batch.reply();
                    if (batch.replyHasData()) {
                        gather[n++] = batch.dataView.clear().limit(batch.lengthBytes);
                    }
                    slotCount++;
                    batch = batch.next;
                }
                send(n);
                for (NbdSlot s = first; s != batch; ) {
                    NbdSlot next = s.next;
                    release(s);
                    free.push(s);
                    inFlight.decrementAndGet();
                    s = next;
                }
            }
        }
    }

    private void send(int n) {
        if (broken) {
            return;
        }
        try {
            long left = 0;
            for (int i = 0; i < n; i++) {
                left += gather[i].remaining();
            }
            int start = 0;
            while (left > 0) {
                left -= ch.write(gather, start, n - start);
                while (start < n && !gather[start].hasRemaining()) {
                    start++;
                }
            }
        } catch (IOException e) {
            broken = true; // client gone: keep draining replies so every slot comes back
            LOG.debug("nbd {}: write failed: {}", peer, e.toString());
        } finally {
            java.util.Arrays.fill(gather, 0, n, null);
        }
    }

    private void shutdown() {
        stopping = true;
        long deadline = System.nanoTime() + DRAIN_TIMEOUT_NS;
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            // free.await returns at once while some slots are free: poll instead (teardown only, not per I/O)
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        ready.wake();
        try {
            writer.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            ch.close();
        } catch (IOException ignored) {
            // closing: nothing to recover
        }
        if (inFlight.get() > 0) {
            // the device still owns some buffers: leaking them is safer than freeing memory it may write into
            LOG.warn("nbd {}: {} requests still in flight after {} s; their buffers are not freed", peer, inFlight.get(),
                    TimeUnit.NANOSECONDS.toSeconds(DRAIN_TIMEOUT_NS));
            return;
        }
        for (NbdSlot s : slots) {
            device.freeBuffer(s.buffer);
        }
        LOG.debug("nbd {}: closed", peer);
    }
}
