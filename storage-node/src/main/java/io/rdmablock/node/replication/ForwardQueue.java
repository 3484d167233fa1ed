package io.rdmablock.node.replication;

import io.rdmablock.nvmf.host.NvmCommand;

import java.lang.foreign.MemorySegment;

/**
 * One queue to one secondary, owned by the poller thread of one host I/O queue of the primary. Implemented over
 * the shared host-side queue code (nvmf-host); faked in tests.
 */
public interface ForwardQueue {
    /** Status delivered when the command got no answer within the replica timeout (the queue is then broken). */
    int TIMED_OUT = -1;
    /** Status delivered for every outstanding command when the connection to the secondary was lost. */
    int PATH_LOST = -2;

    /** Completions, delivered from within {@link #poll} on the owner thread. */
    interface Listener {
        /** {@code status}: the NVMe status of the secondary's CQE (0 = success), or {@link #TIMED_OUT} / {@link #PATH_LOST}. */
        void forwarded(int tag, int status);
    }

    /**
     * Forwards a host's command with {@code tag}: its 64-byte SQE as the host sent it, with {@code epoch} in
     * CDW2..CDW3 and its data ({@code dataLength} bytes at {@code dataAddress} in the primary's registered memory;
     * length 0 = no data) in the capsule (offset SGL, the data a second SGE with {@code lkey}) when the secondary
     * takes that much in-capsule data, else behind a keyed SGL with {@code rkey} that the secondary RDMA READs. The
     * SQE is copied into the queue's capsule; the data must stay as it is until the completion.
     *
     * @param nowNs the owner's clock ({@link System#nanoTime()} scale): the command's timeout counts from it
     * @return false when every slot is busy (retry later); the command is then not sent
     */
    boolean forward(MemorySegment sqe, long epoch, long dataAddress, int dataLength, int rkey, int lkey, int tag,
                    long nowNs);

    /**
     * Puts a command built by the caller (a resync or verify READ / WRITE, with its epoch and keyed SGL) on the wire
     * with {@code tag}; {@code c} may be reused at once.
     *
     * @return false when every slot is busy (retry later); the command is then not sent
     */
    boolean submit(NvmCommand c, int tag, long nowNs);

    /**
     * True once the queue can carry no more commands (a command timed out: its queue pair is already destroyed, so
     * the secondary cannot touch the primary's buffers; or the connection was lost). Its owner closes it after the
     * poll round.
     */
    boolean isBroken();

    /** Handles what arrived; returns the number of events (0 = idle). */
    int poll(long nowNs);

    /**
     * Commands on the wire not yet answered; -1 when unknown (the owner then never waits on this queue).
     * Owner thread.
     */
    default int outstanding() {
        return -1;
    }

    /**
     * Waits up to {@code timeoutNs} for the next answer and handles what arrived, as {@link #poll} does (see
     * {@code PeerQueue#await}); 0 at once by default (a queue that cannot be waited on). Owner thread.
     *
     * @return the number of events handled (0: none within the timeout)
     */
    default int await(long timeoutNs) {
        return 0;
    }

    /**
     * Registers {@code segment} (native, kept alive by the caller until this queue is closed) in this queue's
     * protection domain for the peer's RDMA READ and WRITE: the buffer of a resync or verify association (a queue
     * opened without a host queue's protection domain). Deregistered when the queue is closed. Owner thread.
     *
     * @return the rkey to put in a keyed SGL naming {@code segment.address()}
     * @throws UnsupportedOperationException when the queue was opened in a host queue's protection domain
     */
    default int register(java.lang.foreign.MemorySegment segment) {
        throw new UnsupportedOperationException("no protection domain of its own");
    }

    /**
     * Destroys the queue pair: from then on the secondary cannot touch the primary's buffers through it. Outstanding
     * commands are reported {@link #PATH_LOST} if not yet reported. Idempotent.
     */
    void close();
}
