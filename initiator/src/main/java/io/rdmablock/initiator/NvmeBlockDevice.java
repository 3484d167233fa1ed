package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.QueueMemory;
import io.rdmablock.nvmf.host.RegisteredBuffers;
import io.rdmablock.nvmf.host.TargetLimits;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link BlockDevice} over NVMe-oF/RDMA: one controller association (admin queue + {@link DeviceOptions#ioQueues()}
 * I/O queues, fewer when the controller grants fewer) with one namespace of a subsystem: the {@link DeviceOptions#nsid()}
 * option, else nsid 1 or the first active one ({@link TargetIdentity}). Works with rdmablock's storage node and with
 * standard NVMe-oF/RDMA targets (Linux nvmet-rdma, SPDK). See {@link IoQueue} for the data path and
 * {@link Controller} for keep-alive and reconnect.
 *
 * <p>Limits per command: READ/WRITE at most {@link #maxTransferBytes()} (MDTS, capped at 1 MiB; larger I/O is split
 * and the parts run in parallel on all queues); WRITE ZEROES at most 65 536 blocks; DSM one range of at most 2^24
 * blocks per command. Zero-length I/O completes at once without a command (NLB is 0-based on the wire, case C12).
 * A range beyond the capacity known to the host triggers one Identify Namespace refresh (a resize, case C11); if
 * it is still beyond, the future fails with {@link NvmeStatusException} LBA Out of Range (sct 0, sc 0x80), the
 * status the node would answer.
 */
public final class NvmeBlockDevice implements BlockDevice {
    private static final Logger LOG = LoggerFactory.getLogger(NvmeBlockDevice.class);
    /** Default host NQN prefix (NVMe Base 2.0 section 4.5, UUID-based NQN). */
    public static final String HOSTNQN_UUID_PREFIX = "nqn.2014-08.org.nvmexpress:uuid:";
    static final int MAX_TRANSFER_CAP = 1 << 20;
    static final int MAX_WRITE_ZEROES_BLOCKS = 65536;
    static final int MAX_DSM_BLOCKS = 1 << 24;

    private final InetSocketAddress address;
    private final String subnqn;
    private final String hostnqn;
    private final byte[] hostId;
    private final DeviceOptions opts;
    private final VerbsProvider provider;
    private final boolean ownsProvider;
    private final Controller controller;
    private final AtomicLong nextSeq = new AtomicLong();
    /** Multipath only: the multipath this device is a path of (its I/O is routed there), else null. */
    private final PathEvents pathEvents;
    /** Multipath only: where this device's requests go (the multipath's current path), else null (own queues). */
    private final Router router;
    private ProtectionDomain pd;
    private RegisteredBuffers buffers;
    private QueueMemory adminMemory;
    private volatile IoQueue[] queues = new IoQueue[0];
    private volatile long capacityBytes;
    private volatile int lbaSize = 512;
    private volatile boolean zeroesAfterTrim;
    private volatile int maxTransferBytes;
    private volatile long mdtsBytes;
    private volatile int inCapsuleBytes;
    private volatile boolean closed;

    private NvmeBlockDevice(InetSocketAddress address, String subnqn, String hostnqn, DeviceOptions opts,
                            PathEvents pathEvents, Router router) {
        this.address = address;
        this.pathEvents = pathEvents;
        this.router = router;
        this.subnqn = subnqn;
        // HOSTID: random per device, kept across its reconnects. The node replaces an association only by one with
        // the same hostnqn AND HOSTID (case C8), so two processes (or two devices) sharing a hostnqn, as an allow-list
        // makes them, coexist instead of evicting each other, while this device's own reconnect still fences its
        // previous association.
        UUID u = UUID.randomUUID();
        this.hostnqn = hostnqn == null ? HOSTNQN_UUID_PREFIX + u : hostnqn;
        this.hostId = ByteBuffer.allocate(16).putLong(u.getMostSignificantBits())
                .putLong(u.getLeastSignificantBits()).array();
        this.opts = opts;
        if (opts.provider() != null) {
            this.provider = opts.provider();
            this.ownsProvider = false;
        } else {
            this.provider = Providers.select(opts.providerMode() == null ? Providers.configuredMode()
                    : opts.providerMode());
            this.ownsProvider = true;
        }
        this.controller = new Controller(this, opts);
    }

    /**
     * Connects to {@code subnqn} on the node at {@code address}: admin queue, Connect, enable, Identify controller and
     * namespace, then the I/O queues.
     *
     * @param hostnqn the host NQN (checked against the volume's allowed hosts); null for a random UUID-based one
     * @throws NvmeStatusException when a Connect or Identify fails with a status (e.g. sct 1 sc 0x84 invalid host,
     *                             sct 1 sc 0x82 invalid parameters, unknown subnqn)
     * @throws BlockIoException    when the node cannot be reached or rejects the connection, or a step times out
     */
    public static NvmeBlockDevice open(InetSocketAddress address, String subnqn, String hostnqn, DeviceOptions opts) {
        return open(address, subnqn, hostnqn, opts, null, null);
    }

    /**
     * Opens one path of a multipath device: as {@link #open}, but I/O the path cannot complete goes to
     * {@code events}, its controller reads the ANA state on every (re)connect, and requests built here are handed to
     * {@code router}.
     */
    static NvmeBlockDevice openPath(InetSocketAddress address, String subnqn, String hostnqn, DeviceOptions opts,
                                    PathEvents events, Router router) {
        return open(address, subnqn, hostnqn, opts, events, router);
    }

    private static NvmeBlockDevice open(InetSocketAddress address, String subnqn, String hostnqn, DeviceOptions opts,
                                        PathEvents events, Router router) {
        NvmeBlockDevice dev = new NvmeBlockDevice(address, subnqn, hostnqn, opts, events, router);
        try {
            dev.controller.connectInitial();
        } catch (RuntimeException e) {
            dev.close();
            throw e;
        }
        LOG.info("opened {} at {}: capacityBytes={}, lbaSize={}, maxTransferBytes={}, inCapsuleBytes={}, "
                        + "ioQueues={}x{}, provider={}", subnqn, address, dev.capacityBytes, dev.lbaSize,
                dev.maxTransferBytes, dev.inCapsuleBytes, dev.queues.length, dev.queues[0].mem.entries(),
                dev.provider.name());
        return dev;
    }

    // ---- BlockDevice -------------------------------------------------------------------------------------------

    @Override
    public long capacityBytes() {
        return capacityBytes;
    }

    @Override
    public CompletableFuture<Long> refreshCapacity() {
        if (closed) {
            return CompletableFuture.completedFuture(capacityBytes);
        }
        return controller.refreshNamespace().thenApply(v -> capacityBytes);
    }

    @Override
    public String lossReason() {
        if (closed) {
            return "device closed";
        }
        return controller.lossMessage();
    }

    @Override
    public int lbaSize() {
        return lbaSize;
    }

    @Override
    public int maxTransferBytes() {
        return maxTransferBytes;
    }

    @Override
    public boolean zeroesAfterTrim() {
        return zeroesAfterTrim;
    }

    /** MDTS as the controller advertised it, in bytes; 0 = no limit. */
    public long mdtsBytes() {
        return mdtsBytes;
    }

    /** In-capsule data bytes the controller accepts (IOCCSZ x 16 - 64). */
    public int inCapsuleBytes() {
        return inCapsuleBytes;
    }

    public String hostnqn() {
        return hostnqn;
    }

    @Override
    public CompletableFuture<Void> read(long offsetBytes, MemorySegment dst) {
        return data(Opcodes.IO_READ, offsetBytes, dst, 0, 0);
    }

    @Override
    public CompletableFuture<Void> write(long offsetBytes, MemorySegment src, boolean fua) {
        return data(Opcodes.IO_WRITE, offsetBytes, src, fua ? SqeDescriptor.CDW12_FUA : 0, 0);
    }

    @Override
    public CompletableFuture<Void> readSnapshot(long snapshotId, long offsetBytes, MemorySegment dst) {
        if (snapshotId < 1) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("invalid snapshot id: snapshotId="
                    + snapshotId + ", min=1"));
        }
        return data(Opcodes.IO_READ_SNAPSHOT, offsetBytes, dst, 0, snapshotId);
    }

    @Override
    public CompletableFuture<Void> flush() {
        if (closed) {
            return CompletableFuture.failedFuture(new DeviceLostException("device closed"));
        }
        IoRequest r = new IoRequest(Opcodes.IO_FLUSH, 0, 0, null, 0, null);
        route(r);
        return r;
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offsetBytes, long lengthBytes) {
        return range(Opcodes.IO_WRITE_ZEROES, offsetBytes, lengthBytes);
    }

    @Override
    public CompletableFuture<Void> trim(long offsetBytes, long lengthBytes) {
        return range(Opcodes.IO_DATASET_MANAGEMENT, offsetBytes, lengthBytes);
    }

    @Override
    public MemorySegment allocateBuffer(long lengthBytes) {
        return buffers.allocate(lengthBytes);
    }

    @Override
    public void freeBuffer(MemorySegment buffer) {
        buffers.free(buffer);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        controller.stop();
        for (IoQueue q : queues) {
            q.close();
        }
        controller.release();
        if (adminMemory != null) {
            adminMemory.close();
        }
        if (buffers != null) {
            buffers.close();
        }
        if (pd != null) {
            pd.close();
        }
        if (ownsProvider) {
            provider.close();
        }
    }

    // ---- submission ----------------------------------------------------------------------------------------------

    private CompletableFuture<Void> data(int opcode, long offsetBytes, MemorySegment buf, int flags, long snap) {
        if (buf == null || !buf.isNative()) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "invalid buffer: a native MemorySegment is required (heap segments cannot be registered)"));
        }
        long len = buf.byteSize();
        IoQueue[] qs = queues;
        if (qs.length > 0 && !qs[0].canAccess(buf)) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("invalid buffer: the segment is "
                    + "confined to another thread or closed; use Arena.ofShared()/global() or allocateBuffer"));
        }
        String bad = checkAlignment(offsetBytes, len);
        if (bad != null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(bad));
        }
        if (len == 0) {
            return closed ? lost() : CompletableFuture.completedFuture(null);
        }
        if (len > capacityBytes - offsetBytes) {
            return controller.refreshNamespace().thenCompose(v -> len > capacityBytes - offsetBytes
                    ? outOfRange(offsetBytes, len) : dispatchData(opcode, offsetBytes, buf, flags, snap));
        }
        return dispatchData(opcode, offsetBytes, buf, flags, snap);
    }

    private CompletableFuture<Void> dispatchData(int opcode, long offsetBytes, MemorySegment buf, int flags,
                                                 long snap) {
        if (closed) {
            return lost();
        }
        int lba = lbaSize;
        long len = buf.byteSize();
        int max = maxTransferBytes;
        if (len <= max) {
            IoRequest r = new IoRequest(opcode, offsetBytes / lba, (int) (len / lba), buf, flags, null);
            r.snapshotId = snap;
            route(r);
            return r;
        }
        int parts = (int) ((len + max - 1) / max);
        IoRequest.Split split = new IoRequest.Split(parts);
        for (long off = 0; off < len; off += max) {
            long n = Math.min(max, len - off);
            IoRequest r = new IoRequest(opcode, (offsetBytes + off) / lba, (int) (n / lba),
                    buf.asSlice(off, n), flags, split);
            r.snapshotId = snap;
            route(r);
        }
        return split;
    }

    private CompletableFuture<Void> range(int opcode, long offsetBytes, long lengthBytes) {
        String bad = checkAlignment(offsetBytes, lengthBytes);
        if (bad != null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(bad));
        }
        if (lengthBytes == 0) {
            return closed ? lost() : CompletableFuture.completedFuture(null);
        }
        if (lengthBytes > capacityBytes - offsetBytes) {
            return controller.refreshNamespace().thenCompose(v -> lengthBytes > capacityBytes - offsetBytes
                    ? outOfRange(offsetBytes, lengthBytes) : dispatchRange(opcode, offsetBytes, lengthBytes));
        }
        return dispatchRange(opcode, offsetBytes, lengthBytes);
    }

    private CompletableFuture<Void> dispatchRange(int opcode, long offsetBytes, long lengthBytes) {
        if (closed) {
            return lost();
        }
        int lba = lbaSize;
        long slba = offsetBytes / lba;
        long blocks = lengthBytes / lba;
        long max = opcode == Opcodes.IO_WRITE_ZEROES ? MAX_WRITE_ZEROES_BLOCKS : MAX_DSM_BLOCKS;
        if (blocks <= max) {
            IoRequest r = new IoRequest(opcode, slba, (int) blocks, null, 0, null);
            route(r);
            return r;
        }
        IoRequest.Split split = new IoRequest.Split((int) ((blocks + max - 1) / max));
        for (long b = 0; b < blocks; b += max) {
            route(new IoRequest(opcode, slba + b, (int) Math.min(max, blocks - b), null, 0, split));
        }
        return split;
    }

    private String checkAlignment(long offsetBytes, long lengthBytes) {
        int lba = lbaSize;
        if (offsetBytes < 0 || offsetBytes % lba != 0) {
            return "invalid offsetBytes: offsetBytes=" + offsetBytes + ", must be >= 0 and a multiple of lbaSize="
                    + lba;
        }
        if (lengthBytes < 0 || lengthBytes % lba != 0) {
            return "invalid lengthBytes: lengthBytes=" + lengthBytes + ", must be >= 0 and a multiple of lbaSize="
                    + lba;
        }
        return null;
    }

    private CompletableFuture<Void> outOfRange(long offsetBytes, long lengthBytes) {
        return CompletableFuture.failedFuture(new NvmeStatusException("LBA out of range: offsetBytes=" + offsetBytes
                + ", lengthBytes=" + lengthBytes + ", capacityBytes=" + capacityBytes, NvmeStatus.SCT_GENERIC,
                NvmeStatus.SC_LBA_OUT_OF_RANGE, true));
    }

    private static CompletableFuture<Void> lost() {
        return CompletableFuture.failedFuture(new DeviceLostException("device closed"));
    }

    /** Numbers {@code r} and sends it on: to this device's queues, or to the multipath's router. */
    private void route(IoRequest r) {
        r.seq = nextSeq.getAndIncrement();
        Router rt = router;
        if (rt == null) {
            submitHere(r);
        } else {
            rt.submit(r);
        }
    }

    /** Puts {@code r} on one of this device's I/O queues (round robin by its sequence number). */
    void submitHere(IoRequest r) {
        IoQueue[] qs = queues;
        qs[(int) Long.remainderUnsigned(r.seq, qs.length)].submit(r);
    }

    /** Where a multipath device's requests go; called per I/O, so it must not block or lock on its fast path. */
    interface Router {
        void submit(IoRequest r);
    }

    /**
     * Raw I/O command pass-through (like nvme-cli's {@code io-passthru}): sends one NVM command set I/O command exactly
     * as given, without the checks and splitting of {@link #read}/{@link #write} (no range, alignment, namespace or
     * MDTS check on the host; {@code slba}, {@code blockCount} and {@code nsid} go into the capsule unchanged), so
     * the target's own validation can be exercised. It is sent on one of this device's I/O queues like any other
     * I/O, with the same timeout and reconnect handling.
     *
     * @param opcode     NVM I/O opcode ({@link Opcodes#IO_READ}, {@link Opcodes#IO_WRITE}, ...)
     * @param nsid       namespace id put in the command (not checked: 0 or an unknown id reaches the target)
     * @param slba       starting LBA (CDW10/11), any 64-bit value
     * @param blockCount number of logical blocks (NLB is {@code blockCount - 1} in CDW12)
     * @param data       the data buffer, from {@link #allocateBuffer}: the destination of a read, the source of a
     *                   write; its whole length is described by the command's keyed SGL unless {@code sglBytes} says
     *                   otherwise
     * @param sglBytes   length put in the keyed SGL descriptor, or -1 for {@code data.byteSize()}; a length that
     *                   disagrees with {@code blockCount} is sent as is
     * @return completes normally when the target answers with a successful status; completes exceptionally with
     *         {@link NvmeStatusException} (the target's status, {@link NvmeStatusException#sc()}) for an error status,
     *         with {@link DeviceLostException} when the device is lost or closed, or with the timeout / transport
     *         failure its I/O queue reports; a read's data is in {@code data} once it completes normally
     */
    public CompletableFuture<Void> submitRaw(int opcode, int nsid, long slba, int blockCount, MemorySegment data,
                                             int sglBytes) {
        IoRequest r = new IoRequest(opcode, slba, blockCount, data, 0, null);
        r.nsid = nsid;
        r.sglBytes = sglBytes;
        route(r);
        return r;
    }

    /**
     * The state of this device's controller association (read-only; for monitoring, diagnostics and tests): see
     * {@link AssociationState} for its meaning and transitions. A snapshot: it may change right after it is read.
     */
    public AssociationState state() {
        return controller.state();
    }

    /**
     * How many times this device has connected a new association after losing one (0 while the first association
     * lasts); never decreases. Read-only, for monitoring, diagnostics and tests.
     */
    public int reconnects() {
        return controller.reconnects();
    }

    // ---- package-private: controller and tests -----------------------------------------------------------------

    Controller controller() {
        return controller;
    }

    /** The multipath of which this device is a path, or null. */
    PathEvents pathEvents() {
        return pathEvents;
    }

    DeviceOptions options() {
        return opts;
    }

    RegisteredBuffers buffers() {
        return buffers;
    }

    IoQueue[] queues() {
        return queues;
    }

    /** READ/WRITE payloads copied (bounce or in-capsule) on this device's queues since it opened (tests). */
    long copiedTransfers() {
        long n = 0;
        for (IoQueue q : queues) {
            if (q != null) {
                n += q.copiedTransfers();
            }
        }
        return n;
    }

    InetSocketAddress address() {
        return address;
    }

    String subnqn() {
        return subnqn;
    }

    byte[] hostId() {
        return hostId;
    }

    VerbsProvider provider() {
        return provider;
    }

    ProtectionDomain pd() {
        return pd;
    }

    QueueMemory adminMemory() {
        return adminMemory;
    }

    /** Stale (dropped) completions over all I/O queues (case C9). */
    long staleCompletions() {
        long n = 0;
        for (IoQueue q : queues) {
            n += q.staleCompletions();
        }
        return n;
    }

    /** First connect: protection domain, registered-buffer pool and admin memory on the device routing to the node. */
    void ensureDeviceResources(DeviceContext device, int adminEntries) {
        if (pd == null) {
            pd = device.allocPd();
            buffers = new RegisteredBuffers(pd, opts.maxBufferBytes());
            adminMemory = QueueMemory.forAdminQueue(pd, adminEntries);
        }
    }

    void controllerIdentified(IdentifyControllerDescriptor.Info info, TargetLimits limits) {
        mdtsBytes = limits.mdtsBytes();
        inCapsuleBytes = limits.inCapsuleBytes();
    }

    void namespaceIdentified(IdentifyNamespaceDescriptor.Info info) {
        long old = capacityBytes;
        lbaSize = info.lbaSize();
        zeroesAfterTrim = info.zeroesAfterTrim();
        capacityBytes = info.capacityBytes();
        if (old != 0 && old != capacityBytes) {
            LOG.info("{}: capacity changed from {} to {} bytes", subnqn, old, capacityBytes);
        }
    }

    /**
     * Creates the I/O queues on the first connect ({@code count} queues of min(queueEntries, the controller's
     * maximum) entries, memory sized from Identify) and starts their pollers; later calls only lower the transfer
     * size when MDTS shrank.
     */
    void ensureQueues(IdentifyControllerDescriptor.Info info, TargetLimits limits, int count) {
        long mdts = limits.mdtsBytes() == 0 ? MAX_TRANSFER_CAP : Math.min(limits.mdtsBytes(), MAX_TRANSFER_CAP);
        long perCommand = Math.min(mdts, (long) MAX_WRITE_ZEROES_BLOCKS * lbaSize);
        perCommand = Math.min(perCommand, SglDescriptor.MAX_KEYED_LENGTH) / lbaSize * lbaSize;
        if (queues.length > 0) {
            if (perCommand < maxTransferBytes) {
                maxTransferBytes = (int) perCommand;
            }
            return;
        }
        maxTransferBytes = (int) perCommand;
        long timeoutNs = TimeUnit.MILLISECONDS.toNanos(pathEvents != null && opts.pathTimeoutMs() > 0
                ? opts.pathTimeoutMs() : opts.commandTimeoutMs());
        int entries = Math.min(opts.queueEntries(), limits.maxQueueEntries());
        if (entries < 2) {
            throw new BlockIoException("controller allows " + limits.maxQueueEntries() + " queue entries, min=2");
        }
        if (count < opts.ioQueues() || entries < opts.queueEntries()) {
            LOG.info("{}: the controller grants {} I/O queues of {} entries (asked {} of {})", subnqn, count, entries,
                    opts.ioQueues(), opts.queueEntries());
        }
        IoQueue[] qs = new IoQueue[count];
        for (int i = 0; i < qs.length; i++) {
            qs[i] = new IoQueue(this, pd, i + 1, entries, inCapsuleBytes, maxTransferBytes, timeoutNs);
        }
        queues = qs;
        for (IoQueue q : qs) {
            q.start();
        }
    }
}
