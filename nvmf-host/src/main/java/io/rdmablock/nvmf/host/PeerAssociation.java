package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.VerbsProvider;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * One controller association of a host with a target, set up on the calling thread: the admin queue (Fabrics
 * Connect qid 0 with a dynamic cntlid, Property Get CAP, CC.EN=1, wait for CSTS.RDY within CAP.TO, Identify
 * Controller for the limits, Set Features Number of Queues), then {@code ioQueues} I/O queues (Connect qid 1..N with
 * the admin queue's cntlid), each of {@code queueEntries} entries. The same steps and code as the initiator's
 * controller ({@link QueueConnection#connect}, {@link AdminCommands#readCapAndEnable}), as Linux
 * {@code nvme_rdma_setup_ctrl} does them. A storage node uses it to reach a peer: hand each of {@link #ioQueue}
 * to a {@link PeerQueue} on the poller, and call {@link #keepAlive()} every {@link #keepAliveIntervalNs()} from the
 * thread that owns the association (not the poller: a Keep Alive waits for its response).
 *
 * <p>Memory: every queue's {@link QueueMemory} is registered on the caller's protection domain, which must belong to
 * the device that routes to the target; memory the caller names in keyed SGLs must be registered on that same PD
 * (with REMOTE_READ for data the target fetches), as the target's RDMA READ goes through these queue pairs. The Host
 * Identifier is a name-based UUID of the hostnqn (stable across restarts of the same host).
 *
 * <p>Errors of {@link #connect}: {@link NvmfStatusException} when a Connect or admin command is answered with an error
 * status (e.g. sct 1 sc 84h: this hostnqn is not allowed), {@link NvmfHostException} when the target cannot be
 * reached, rejects the CM connect, grants fewer queues or entries than asked, or a step exceeds {@code timeoutNs};
 * everything set up so far is released first.
 */
public final class PeerAssociation implements AutoCloseable {
    /** Admin queue entries (the initiator's default; the admin queue runs one command at a time plus the AER). */
    public static final int ADMIN_QUEUE_ENTRIES = 32;

    /**
     * What to connect to and how.
     *
     * @param address            the target's fabric address ({@link FabricAddress#parse} reads {@code host:port})
     * @param subnqn             the subsystem NQN
     * @param hostnqn            the host NQN (a node's: {@code nqn.2026-11.io.rdmablock:node:<nodeId>})
     * @param ioQueues           I/O queues, 1 .. 64
     * @param queueEntries       most entries of each I/O queue, 2 .. 4096 (entries - 1 commands outstanding); a target
     *                           with smaller queues (CAP.MQES + 1) gets queues of its size
     * @param keepAliveTimeoutMs KATO sent in the admin Connect, 1000 .. 3600000 ms; Keep Alive every KATO / 2
     * @param timeoutNs          bound of each setup step and of each Keep Alive's wait, &gt; 0
     * @param dhchapSecret       the host's DH-HMAC-CHAP secret for every queue (a node's link secret), or null
     * @param dhchapCtrlSecret   the controller secret the target must prove back (bidirectional), or null
     */
    public record Params(InetSocketAddress address, String subnqn, String hostnqn, int ioQueues, int queueEntries,
                         int keepAliveTimeoutMs, long timeoutNs,
                         io.rdmablock.nvme.auth.DhchapSecret dhchapSecret,
                         io.rdmablock.nvme.auth.DhchapSecret dhchapCtrlSecret) {
        /** Without DH-HMAC-CHAP secrets. */
        public Params(InetSocketAddress address, String subnqn, String hostnqn, int ioQueues, int queueEntries,
                      int keepAliveTimeoutMs, long timeoutNs) {
            this(address, subnqn, hostnqn, ioQueues, queueEntries, keepAliveTimeoutMs, timeoutNs, null, null);
        }

        @Override
        public String toString() { // never the secrets
            return "Params[address=" + address + ", subnqn=" + subnqn + ", hostnqn=" + hostnqn + ", ioQueues="
                    + ioQueues + ", queueEntries=" + queueEntries + ", keepAliveTimeoutMs=" + keepAliveTimeoutMs
                    + ", dhchap=" + (dhchapSecret != null) + "]";
        }

        /** @throws IllegalArgumentException naming the field and its bounds */
        public Params {
            if (address == null || subnqn == null || subnqn.isEmpty() || hostnqn == null || hostnqn.isEmpty()) {
                throw new IllegalArgumentException("invalid peer association: address=" + address + ", subnqn="
                        + subnqn + ", hostnqn=" + hostnqn + " (all required)");
            }
            check("ioQueues", ioQueues, 1, 64);
            check("queueEntries", queueEntries, 2, 4096);
            check("keepAliveTimeoutMs", keepAliveTimeoutMs, 1000, 3_600_000);
            if (timeoutNs <= 0) {
                throw new IllegalArgumentException("invalid timeoutNs: timeoutNs=" + timeoutNs + ", min=1");
            }
        }

        private static void check(String name, long v, long min, long max) {
            if (v < min || v > max) {
                throw new IllegalArgumentException("invalid " + name + ": " + name + "=" + v + ", min=" + min
                        + ", max=" + max);
            }
        }
    }

    private final Params params;
    private final QueueMemory adminMemory;
    private final QueueConnection admin;
    private final QueueConnection[] ioQueues;
    private final TargetLimits limits;
    private boolean closed;

    private PeerAssociation(Params params, QueueMemory adminMemory, QueueConnection admin, QueueConnection[] ioQueues,
                            TargetLimits limits) {
        this.params = params;
        this.adminMemory = adminMemory;
        this.admin = admin;
        this.ioQueues = ioQueues;
        this.limits = limits;
    }

    /** The 16-byte Host Identifier used for {@code hostnqn}: the name-based (type 3) UUID of its UTF-8 bytes. */
    public static byte[] hostId(String hostnqn) {
        UUID u = UUID.nameUUIDFromBytes(hostnqn.getBytes(StandardCharsets.UTF_8));
        return ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits())
                .array();
    }

    /**
     * Connects the association (see the class comment) on the calling thread.
     *
     * @param pd the protection domain of the device that routes to {@code params.address()}
     */
    public static PeerAssociation connect(VerbsProvider provider, ProtectionDomain pd, Params params) {
        return connect(provider, pd, params, hostId(params.hostnqn()));
    }

    /**
     * As {@link #connect(VerbsProvider, ProtectionDomain, Params)} with a given 16-byte Host Identifier: several
     * associations of one host NQN that must coexist (a target fences a new association of the same hostnqn and
     * HOSTID against the old one, as a host restart) each get their own.
     *
     * @throws IllegalArgumentException when {@code hostId} is not 16 bytes
     */
    public static PeerAssociation connect(VerbsProvider provider, ProtectionDomain pd, Params params, byte[] hostId) {
        if (hostId == null || hostId.length != 16) {
            throw new IllegalArgumentException("invalid hostId: length=" + (hostId == null ? -1 : hostId.length)
                    + ", expected 16");
        }
        long t = params.timeoutNs();
        QueueMemory adminMemory = QueueMemory.forAdminQueue(pd, ADMIN_QUEUE_ENTRIES);
        QueueConnection admin = null;
        QueueConnection[] io = new QueueConnection[params.ioQueues()];
        try {
            admin = QueueConnection.connect(provider, params.address(), pd, adminMemory, 0, ADMIN_QUEUE_ENTRIES,
                    ConnectDataDescriptor.CNTLID_DYNAMIC, new QueueConnection.ConnectParams(params.subnqn(),
                            params.hostnqn(), hostId, params.keepAliveTimeoutMs())
                            .withDhchap(params.dhchapSecret(), params.dhchapCtrlSecret()), t);
            long cap = AdminCommands.readCapAndEnable(admin, t, t);
            IdentifyControllerDescriptor.Info info = AdminCommands.identifyController(admin, t);
            TargetLimits limits = TargetLimits.of(cap, admin.memory().identify(), info);
            int granted = AdminCommands.setNumberOfQueues(admin, params.ioQueues(), t);
            // queueEntries is an upper bound: a target with smaller queues (CAP.MQES) gets queues of its size
            int entries = Math.min(params.queueEntries(), limits.maxQueueEntries());
            if (granted < params.ioQueues() || entries < 2) {
                throw new NvmfHostException("peer " + params.address() + " (" + params.subnqn() + ") grants "
                        + granted + " I/O queues of at most " + limits.maxQueueEntries() + " entries; asked for "
                        + params.ioQueues() + " of " + params.queueEntries());
            }
            QueueConnection.ConnectParams ioParams = new QueueConnection.ConnectParams(params.subnqn(),
                    params.hostnqn(), hostId, 0).withDhchap(params.dhchapSecret(), params.dhchapCtrlSecret());
            for (int i = 0; i < io.length; i++) {
                QueueMemory mem = new QueueMemory(pd, entries - 1, 0, entries);
                try {
                    io[i] = QueueConnection.connect(provider, params.address(), pd, mem, i + 1,
                            entries, admin.cntlid(), ioParams, t);
                } catch (RuntimeException e) {
                    mem.close();
                    throw e;
                }
            }
            return new PeerAssociation(params, adminMemory, admin, io, limits);
        } catch (RuntimeException e) {
            RuntimeException failure = e;
            closeAll(admin, adminMemory, io, failure);
            throw failure;
        }
    }

    /** The parameters it was connected with. */
    public Params params() {
        return params;
    }

    /** The controller's cntlid. */
    public int cntlid() {
        return admin.cntlid();
    }

    /** The limits the target stated (CAP, Identify Controller). */
    public TargetLimits limits() {
        return limits;
    }

    /** I/O queues connected. */
    public int ioQueueCount() {
        return ioQueues.length;
    }

    /**
     * The established connection of I/O queue {@code index} (qid index + 1), for a {@link PeerQueue}, which then owns
     * it; {@link #close()} closes it too (closes are idempotent): close the PeerQueues first.
     */
    public QueueConnection ioQueue(int index) {
        return ioQueues[index];
    }

    /** How often {@link #keepAlive()} must run: KATO / 2, as Linux {@code nvme_keep_alive_work}. */
    public long keepAliveIntervalNs() {
        return TimeUnit.MILLISECONDS.toNanos(params.keepAliveTimeoutMs()) / 2;
    }

    /**
     * Sends one Keep Alive on the admin queue and waits for its response (at most {@code timeoutNs}); also reports a
     * CM disconnect of the admin queue. On the association's owner thread, never the poller.
     *
     * @throws NvmfStatusException when the Keep Alive is answered with an error status
     * @throws NvmfHostException   when it times out, the admin queue failed or was disconnected, or after close
     */
    public void keepAlive() {
        if (closed) {
            throw new NvmfHostException("peer association with " + params.address() + " is closed");
        }
        if (admin.disconnectedEvent()) {
            throw new NvmfHostException("peer " + params.address() + " (" + params.subnqn()
                    + "): admin queue disconnected");
        }
        QueueConnection.Completion r = AdminCommands.keepAlive(admin, params.timeoutNs());
        if (r.status() != NvmeStatus.SUCCESS) {
            throw NvmfStatusException.of("Keep Alive to " + params.address() + " (" + params.subnqn() + ") failed",
                    r.status());
        }
    }

    /**
     * Asks the secondary for a peer lease (docs/failover.md, "Peer lease"; {@link AdminCommands#peerLease}) on the
     * admin queue and waits for the answer (at most the association's timeout). On the association's owner thread,
     * as {@link #keepAlive()}.
     *
     * @return the lease granted, ms (0 = refused)
     * @throws NvmfStatusException when answered with an error status
     * @throws NvmfHostException   when it times out, the admin queue failed or was disconnected, or after close
     */
    public long peerLease(long epoch, long leaseMs) {
        if (closed || admin.disconnectedEvent()) {
            throw new NvmfHostException("peer association with " + params.address() + " is closed or disconnected");
        }
        QueueConnection.Completion r = AdminCommands.peerLease(admin, epoch, leaseMs, params.timeoutNs());
        if (r.status() != NvmeStatus.SUCCESS) {
            throw NvmfStatusException.of("peer lease from " + params.address() + " (" + params.subnqn()
                    + ") refused", r.status());
        }
        return r.dw0() & 0xFFFF_FFFFL;
    }

    /**
     * Asks the secondary to take or delete a snapshot of its copy ({@link AdminCommands#copySnapshot},
     * docs/snapshots.md "Replicated volumes") and waits for the answer, at most {@code timeoutNs}. On the
     * association's owner thread, as {@link #keepAlive()}.
     *
     * @return the NVMe status of the answer (0: done)
     * @throws NvmfHostException when it times out, the admin queue failed or was disconnected, or after close
     */
    public int copySnapshot(long epoch, long snapshotId, int action, long timeoutNs) {
        if (closed || admin.disconnectedEvent()) {
            throw new NvmfHostException("peer association with " + params.address() + " is closed or disconnected");
        }
        return AdminCommands.copySnapshot(admin, epoch, snapshotId, action, timeoutNs).status();
    }

    /**
     * Disconnects and releases every I/O queue connection and its memory, then the admin queue. Idempotent; keeps
     * the first failure and attaches the others as suppressed.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeAll(admin, adminMemory, ioQueues, null);
    }

    /** Closes in reverse order of creation; adds failures to {@code failure}, or throws the first when it is null. */
    private static void closeAll(QueueConnection admin, QueueMemory adminMemory, QueueConnection[] io,
                                 RuntimeException failure) {
        RuntimeException first = failure;
        for (int i = io.length - 1; i >= 0; i--) {
            if (io[i] != null) {
                first = closeKeeping(io[i], first);
                first = closeKeeping(io[i].memory(), first);
            }
        }
        if (admin != null) {
            first = closeKeeping(admin, first);
        }
        first = closeKeeping(adminMemory, first);
        if (failure == null && first != null) {
            throw first;
        }
    }

    private static RuntimeException closeKeeping(AutoCloseable c, RuntimeException first) {
        try {
            c.close();
        } catch (Exception e) {
            if (first == null) {
                return e instanceof RuntimeException r ? r : new IllegalStateException(e);
            }
            first.addSuppressed(e);
        }
        return first;
    }
}
