package io.rdmablock.initiator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * {@link BlockDevice} of a volume with several copies: one {@link NvmeBlockDevice} per copy (a {@link Path}, same
 * subnqn and host NQN), I/O on the ANA Optimized one and transparent failover between them ({@link Multipath},
 * docs/failover.md). Requests are built (checked, split, numbered) by the first path that connected and routed by
 * the multipath, so callers (NBD, bench, import/export, replay) see one device whatever path serves it. Failures as
 * {@link BlockDevice}, plus: with no Optimized path for {@link DeviceOptions#failoverTimeoutMs()} the device is lost
 * ({@link DeviceLostException}, {@link #lossReason()}).
 */
public final class MultipathDevice implements BlockDevice {
    private static final Logger LOG = LoggerFactory.getLogger(MultipathDevice.class);

    private final Multipath multipath;
    private final NvmeBlockDevice front;
    private final String hostnqn;
    private volatile boolean closed;

    private MultipathDevice(Multipath multipath, NvmeBlockDevice front, String hostnqn) {
        this.multipath = multipath;
        this.front = front;
        this.hostnqn = hostnqn;
    }

    /**
     * Connects a path to every copy (those not reachable now are retried in the background) and routes I/O to the
     * Optimized one.
     *
     * @param name    the volume name (messages)
     * @param hostnqn the host NQN of every path; null for a random UUID-based one
     * @param source  the volume record (re-read during a failover) and the unreachable report; null for none
     * @throws BlockIoException as {@link NvmeBlockDevice#open}, with what the first copy failed with, when none of
     *                          them could be connected
     */
    static MultipathDevice open(String name, CopySource.Copies copies, String subnqn, String hostnqn,
                                DeviceOptions opts, CopySource source) {
        String nqn = hostnqn != null ? hostnqn : NvmeBlockDevice.HOSTNQN_UUID_PREFIX + UUID.randomUUID();
        Multipath mp = new Multipath(name, subnqn, nqn, opts, source, copies);
        mp.start();
        NvmeBlockDevice front = null;
        for (Path p : mp.paths()) {
            if (p.device() != null) {
                front = p.device();
                break;
            }
        }
        MultipathDevice dev = new MultipathDevice(mp, front, nqn);
        LOG.info("opened {} ({}) over {} paths: {}; I/O on {}", name, subnqn, mp.paths().size(), mp.paths(),
                mp.activeDevice() == null ? "none yet (waiting for an Optimized path)" : mp.activeDevice().address());
        return dev;
    }

    @Override
    public long capacityBytes() {
        return front.capacityBytes();
    }

    @Override
    public CompletableFuture<Long> refreshCapacity() {
        return front.refreshCapacity();
    }

    @Override
    public String lossReason() {
        if (closed) {
            return "device closed";
        }
        return multipath.lossMessage();
    }

    @Override
    public int lbaSize() {
        return front.lbaSize();
    }

    @Override
    public int maxTransferBytes() {
        return front.maxTransferBytes();
    }

    @Override
    public boolean zeroesAfterTrim() {
        return front.zeroesAfterTrim();
    }

    public String hostnqn() {
        return hostnqn;
    }

    @Override
    public CompletableFuture<Void> read(long offsetBytes, MemorySegment dst) {
        return front.read(offsetBytes, dst);
    }

    @Override
    public CompletableFuture<Void> readSnapshot(long snapshotId, long offsetBytes, MemorySegment dst) {
        return front.readSnapshot(snapshotId, offsetBytes, dst);
    }

    @Override
    public CompletableFuture<Void> write(long offsetBytes, MemorySegment src, boolean fua) {
        return front.write(offsetBytes, src, fua);
    }

    @Override
    public CompletableFuture<Void> flush() {
        return front.flush();
    }

    @Override
    public CompletableFuture<Void> writeZeroes(long offsetBytes, long lengthBytes) {
        return front.writeZeroes(offsetBytes, lengthBytes);
    }

    @Override
    public CompletableFuture<Void> trim(long offsetBytes, long lengthBytes) {
        return front.trim(offsetBytes, lengthBytes);
    }

    /**
     * Registered on every path's protection domain, those connected now and later (zero copy on whichever path
     * serves it, before and after a failover; {@link PathBuffers}).
     */
    @Override
    public MemorySegment allocateBuffer(long lengthBytes) {
        return multipath.allocateBuffer(lengthBytes);
    }

    @Override
    public void freeBuffer(MemorySegment buffer) {
        multipath.freeBuffer(buffer);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        multipath.close();
    }

    // ---- tests and diagnostics -----------------------------------------------------------------------------------

    Multipath multipath() {
        return multipath;
    }

    /** The device of the path I/O goes to now, or null while there is none. */
    NvmeBlockDevice activePath() {
        return multipath.activeDevice();
    }
}
