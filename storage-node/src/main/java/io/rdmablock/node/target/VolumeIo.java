package io.rdmablock.node.target;

import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.lang.foreign.MemorySegment;

/**
 * The store behind one NVMe I/O queue: executes the NVM commands of that queue's requests (NVM Command Set 1.0
 * chapter 3: READ, WRITE with FUA, FLUSH, WRITE ZEROES, DATASET MANAGEMENT deallocate) and hands them back with an
 * NVMe status. One instance per connected I/O queue, opened at its Fabrics Connect by the subsystem's
 * {@link Factory} ({@link io.rdmablock.node.target.Subsystem#volumeIoFactory()}), closed when the queue is released. {@link LocalVolumeIo}
 * is the node's own copy; a replicated volume's primary wraps it together with its peers' queues and merges their
 * completions (after Mayastor {@code io-engine/src/bdev/nexus/nexus_io.rs}: complete when every child completed, a
 * child's error reported per child).
 *
 * <p><b>Contract.</b> Every method runs on the queue's poller thread (no locks needed, none allowed on the data
 * path), and nothing may allocate per command. {@link #start} is called once per command, after the command's
 * fields were checked (opcode, nsid, LBA range, MDTS, data descriptor, DSM ranges and attributes) and its host data
 * is in place at {@link Request#dataAddress()}; the handle reads the request through its public accessors and must
 * not change it. A command started {@link #IN_FLIGHT} is handed back exactly once, by {@link #poll}, unless the
 * handle is closed first; after that the handle must not touch the request or its data buffer again (the buffer is
 * reused for the next command). Statuses are NVMe status fields as {@link io.rdmablock.rdma.fabric.NvmeStatus}
 * encodes them (SCT, SC, DNR; 0 = success).
 */
public interface VolumeIo extends AutoCloseable {

    /** {@link #start}: the command is in flight; {@link #poll} will hand it back. */
    int IN_FLIGHT = -1;

    /**
     * Starts the whole NVM command of {@code r} ({@link Request#opcode()}; a DATASET MANAGEMENT with every range).
     *
     * @param nowNs the poller's clock of this round ({@link System#nanoTime()} scale), read once per round
     *
     * @return {@link #IN_FLIGHT}, or the NVMe status when the command is complete already (nothing is in flight for
     * it then)
     */
    int start(Request r, long nowNs);

    /**
     * Hands back up to {@code max} completed commands to {@code sink}, in completion order. Called by the queue every
     * polling round (also with nothing in flight). Never blocks.
     *
     * @param nowNs the poller's clock of this round ({@link System#nanoTime()} scale)
     *
     * @return the number of events handled (completions, and for a composite handle also its children's), 0 = idle
     */
    int poll(Completions sink, int max, long nowNs);

    /** Commands started and not yet handed back. The poller's idle strategy and the queue's teardown read it. */
    int inFlight();

    /**
     * Blocks the calling poller until one of this handle's store commands can be reaped by {@link #poll}, or
     * {@code timeoutNs} passes, when every command in flight is waiting on the handle's own store queue and the
     * store can be waited on (io_uring {@code IORING_ENTER_GETEVENTS} with a timeout, the worker pool's signal;
     * {@link io.rdmablock.node.store.BlockQueue#awaitCompletion}). So a poller with only store I/O outstanding wakes
     * when the store completes, not at the end of a fixed park. A replicated handle waits instead on the secondaries
     * that owe answers when its local copy has nothing in flight. Default: cannot wait.
     *
     * @param timeoutNs longest wait, ns; the caller bounds it by its idle wait
     * @return false when the handle cannot wait on its store (the caller parks instead); true when it waited
     *     (a completion is ready, or the timeout passed)
     */
    default boolean awaitStore(long timeoutNs) {
        return false;
    }

    /**
     * Teardown, after the queue stopped starting commands: waits (bounded) for what is still in flight, then releases
     * everything (store queue, peer connections). No completion is handed back afterwards; the queue's registered
     * buffers are released only after this returns. Idempotent. Before closing, the queue drains without blocking
     * its poller: it keeps calling {@link #poll} (completions dropped) until {@link #inFlight()} is 0 or
     * {@link io.rdmablock.node.target.FabricQueue#DRAIN_TIMEOUT_NS} passed.
     */
    @Override
    void close();

    /** Receives completed commands from {@link #poll}; implemented by the queue (preallocated, no capture). */
    @FunctionalInterface
    interface Completions {
        /** {@code r} completed with {@code nvmeStatus} (0 = success). */
        void completed(Request r, int nvmeStatus);
    }

    /**
     * Opens the handle of one I/O queue; runs on that queue's poller during its Fabrics Connect. A failure (any
     * runtime exception) answers the Connect with Internal Error.
     */
    @FunctionalInterface
    interface Factory {
        VolumeIo open(Context queue);
    }

    /**
     * What a {@link Factory} gets for one I/O queue.
     *
     * @param volume            the subsystem's volume (namespace 1)
     * @param store             the node's volume store ({@link VolumeStore#newQueue}, epochs)
     * @param subnqn            the subsystem's NQN
     * @param hostnqn           the connecting host's NQN
     * @param cntlid            the controller the queue belongs to
     * @param qid               the queue id, 1 .. maxIoQueues
     * @param entries           requests of the queue = most commands in flight at once (1-based)
     * @param poller            the poller thread serving the queue ({@link Poller#addPollable} for peer queues)
     * @param device            the device the queue's connection runs on (an NVMe/TCP queue: the node's RDMA device
     *                          its data buffers are registered on); null when none (unregistered TCP buffers)
     * @param protectionDomain  that device's protection domain ({@link io.rdmablock.node.target.Target#protectionDomain}): a peer queue pair
     *                          created in it can let a peer RDMA READ {@link Request#dataAddress()}
     * @param dataRegion        the queue's registered request data buffers (for io_uring fixed buffers)
     * @param recvRegion        the queue's registered RECV slots (in-capsule data)
     * @param registerStoreBuffers whether {@link LocalVolumeIo#open} registers the two regions with its store queue
     *                          (io_uring fixed buffers; {@code rdmablock.target.registerStoreBuffers}, default true)
     */
    record Context(StoreVolume volume, VolumeStore store, String subnqn, String hostnqn, int cntlid, int qid,
                   int entries, Poller poller, DeviceContext device, ProtectionDomain protectionDomain,
                   MemorySegment dataRegion, MemorySegment recvRegion, boolean registerStoreBuffers) {
    }
}
