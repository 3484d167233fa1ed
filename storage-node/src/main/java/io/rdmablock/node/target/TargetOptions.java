package io.rdmablock.node.target;

/**
 * Target configuration, validated once.
 *
 * @param maxQueueEntries      largest I/O queue (entries, 1-based), 2-1024; CAP.MQES advertises it minus one
 * @param maxAdminEntries      largest admin queue (entries), 2-{@code maxQueueEntries}
 * @param inCapsuleDataBytes   in-capsule data the RECV buffers hold after the 64-byte SQE (IOCCSZ), 0-65536, a
 *                             multiple of 16
 * @param mdtsBytes            maximum data transfer size of READ/WRITE, 4096 x 2^n, 4 KiB-16 MiB (the keyed SGL
 *                             length field is 24 bits)
 * @param maxIoQueues          I/O queues per controller (qid 1..maxIoQueues), 1-1024
 * @param pollers              poller threads, 1-64; queues are assigned round robin
 * @param idleSpinNs           how long a poller keeps polling after its last work before it waits (ns), 0-10^9;
 *                             a busy poller never waits, an idle one costs CPU for this long after each burst
 * @param idleWaitNs           how long an idle poller waits (CQ event or park) before polling again
 * @param keepAliveGraceMs     a controller is destroyed when no admin command arrived for KATO + this
 * @param connectTimeoutNs     accept / handshake timeout of the connection manager
 * @param cntlidMin            smallest controller id this node allocates, 1-{@value #MAX_CNTLID}
 * @param cntlidMax            largest controller id this node allocates, cntlidMin-{@value #MAX_CNTLID} (FFF0h-FFFFh
 *                             are reserved, NVMe-oF 1.1 §4.2). Nodes exporting the same subsystem use disjoint ranges
 *                             so a multipath host never sees one cntlid twice in a subsystem (docs/failover.md)
 * @param pending              limits on pending queues (connected at the CM level, no Fabrics Connect validated yet)
 */
public record TargetOptions(int maxQueueEntries, int maxAdminEntries, int inCapsuleDataBytes, int mdtsBytes,
                            int maxIoQueues, int pollers, long idleSpinNs, long idleWaitNs,
                            long keepAliveGraceMs, long connectTimeoutNs, int cntlidMin, int cntlidMax,
                            PendingLimits pending) {
    /** Largest cntlid of the dynamic controller model (NVMe-oF 1.1: FFF0h-FFFFh are reserved). */
    public static final int MAX_CNTLID = 0xFFEF;

    /**
     * Limits on pending queues: a queue is pending from the CM connect request the node accepts until a Fabrics
     * Connect on it has been validated. A pending queue holds only its Connect RECV slot and one request (a few KiB
     * of registered memory, {@link Target#registeredQueueBytes()}); it gets its full buffers at Connect.
     *
     * @param maxPerNode       pending queues on the node, 1-65536; a connect request beyond it evicts (tears down)
     *                         the oldest pending queue of the address holding the most ({@link PendingQueues})
     * @param maxPerAddress    pending queues from one peer IP address (any port), 1-{@code maxPerNode}; a connect
     *                         request beyond it evicts the oldest pending queue of its own address
     * @param connectTimeoutMs a pending queue whose Fabrics Connect has not succeeded this long (ms, 100-3600000)
     *                         after its CM connect request is torn down
     */
    public record PendingLimits(int maxPerNode, int maxPerAddress, long connectTimeoutMs) {
        /** 1024 per node, 256 per address, 10 s (a pending queue costs a few KiB: docs/wire-protocol.md 1.4). */
        public static final PendingLimits DEFAULTS = new PendingLimits(1024, 256, 10_000);

        public PendingLimits {
            check("maxPendingQueues", maxPerNode, 1, 65536);
            check("maxPendingQueuesPerAddress", maxPerAddress, 1, maxPerNode);
            check("pendingConnectTimeoutMs", connectTimeoutMs, 100, 3_600_000);
        }
    }

    /** As the canonical constructor with {@link PendingLimits#DEFAULTS}. */
    public TargetOptions(int maxQueueEntries, int maxAdminEntries, int inCapsuleDataBytes, int mdtsBytes,
                         int maxIoQueues, int pollers, long idleSpinNs, long idleWaitNs,
                         long keepAliveGraceMs, long connectTimeoutNs, int cntlidMin, int cntlidMax) {
        this(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues, pollers,
                idleSpinNs, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, cntlidMin, cntlidMax,
                PendingLimits.DEFAULTS);
    }

    /** As the canonical constructor with the whole cntlid range, 1-{@value #MAX_CNTLID}. */
    public TargetOptions(int maxQueueEntries, int maxAdminEntries, int inCapsuleDataBytes, int mdtsBytes,
                         int maxIoQueues, int pollers, long idleSpinNs, long idleWaitNs,
                         long keepAliveGraceMs, long connectTimeoutNs) {
        this(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues, pollers,
                idleSpinNs, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, 1, MAX_CNTLID);
    }

    public TargetOptions {
        checkCntlidRange(cntlidMin, cntlidMax);
        if (pending == null) {
            throw new IllegalArgumentException("invalid pending: null");
        }
        check("maxQueueEntries", maxQueueEntries, 2, 1024);
        check("maxAdminEntries", maxAdminEntries, 2, maxQueueEntries);
        check("inCapsuleDataBytes", inCapsuleDataBytes, 0, 65536);
        if (inCapsuleDataBytes % 16 != 0) {
            throw new IllegalArgumentException("invalid inCapsuleDataBytes: inCapsuleDataBytes=" + inCapsuleDataBytes
                    + ", must be a multiple of 16");
        }
        check("mdtsBytes", mdtsBytes, 4096, 16 << 20);
        if (Integer.bitCount(mdtsBytes) != 1) {
            throw new IllegalArgumentException("invalid mdtsBytes: mdtsBytes=" + mdtsBytes + ", must be 4096 x 2^n");
        }
        check("maxIoQueues", maxIoQueues, 1, 1024);
        check("pollers", pollers, 1, 64);
        check("idleSpinNs", idleSpinNs, 0, 1_000_000_000L);
        if (idleWaitNs < 1_000 || idleWaitNs > 100_000_000) {
            throw new IllegalArgumentException("invalid idleWaitNs: idleWaitNs=" + idleWaitNs
                    + ", min=1000, max=100000000");
        }
        if (keepAliveGraceMs < 0 || connectTimeoutNs <= 0) {
            throw new IllegalArgumentException("invalid timeouts: keepAliveGraceMs=" + keepAliveGraceMs
                    + ", connectTimeoutNs=" + connectTimeoutNs);
        }
    }

    /** Default {@link #idleSpinNs}: 200 us (docs/bench.md "Node poller spin" has the measurement). */
    public static final long DEFAULT_IDLE_SPIN_NS = 200_000;

    /**
     * Defaults: 128 entries, admin 32, 8 KiB in-capsule, MDTS 128 KiB, 64 I/O queues, 2 pollers, spin
     * {@value #DEFAULT_IDLE_SPIN_NS} ns, idle wait 100 us.
     */
    public static TargetOptions defaults() {
        return new TargetOptions(128, 32, 8192, 128 * 1024, 64, 2, DEFAULT_IDLE_SPIN_NS, 100_000, 1000,
                5_000_000_000L);
    }

    /**
     * A command line's poller spin in microseconds, as {@link #idleSpinNs} nanoseconds.
     *
     * @param flag the option's name, for the error ({@code --idle-spin-us})
     * @throws IllegalArgumentException unless 0 &lt;= us &lt;= 1,000,000 (1 s), naming {@code flag} and the bounds
     */
    public static long idleSpinNsOfMicros(String flag, long us) {
        if (us < 0 || us > 1_000_000) {
            throw new IllegalArgumentException("invalid " + flag + ": value=" + us + ", min=0, max=1000000");
        }
        return us * 1_000;
    }

    /** These options with a poller spin of {@code ns} (see {@link #idleSpinNs}). */
    public TargetOptions withIdleSpinNs(long ns) {
        return new TargetOptions(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues,
                pollers, ns, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, cntlidMin, cntlidMax, pending);
    }

    public TargetOptions withMaxQueueEntries(int entries) {
        return new TargetOptions(entries, Math.min(maxAdminEntries, entries), inCapsuleDataBytes, mdtsBytes,
                maxIoQueues, pollers, idleSpinNs, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, cntlidMin,
                cntlidMax, pending);
    }

    public TargetOptions withPollers(int n) {
        return new TargetOptions(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues, n,
                idleSpinNs, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, cntlidMin, cntlidMax, pending);
    }

    public TargetOptions withKeepAliveGraceMs(long ms) {
        return new TargetOptions(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues,
                pollers, idleSpinNs, idleWaitNs, ms, connectTimeoutNs, cntlidMin, cntlidMax, pending);
    }

    /**
     * The controller ids this node allocates, {@code min..max} inclusive.
     *
     * @throws IllegalArgumentException unless 1 &lt;= min &lt;= max &lt;= {@value #MAX_CNTLID}
     */
    public TargetOptions withCntlidRange(int min, int max) {
        return new TargetOptions(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues,
                pollers, idleSpinNs, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, min, max, pending);
    }

    /** These options with other {@link PendingLimits}. */
    public TargetOptions withPending(PendingLimits limits) {
        return new TargetOptions(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues,
                pollers, idleSpinNs, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, cntlidMin, cntlidMax,
                limits);
    }

    /** @throws IllegalArgumentException unless 1 &lt;= min &lt;= max &lt;= {@value #MAX_CNTLID} */
    static void checkCntlidRange(int min, int max) {
        if (min < 1 || max > MAX_CNTLID || min > max) {
            throw new IllegalArgumentException("invalid cntlid range: cntlidMin=" + min + ", cntlidMax=" + max
                    + ", must be 1 <= cntlidMin <= cntlidMax <= " + MAX_CNTLID + " (0xffef; 0xfff0-0xffff reserved)");
        }
    }

    /** Maximum entries of queue {@code qid} (admin queue: {@link #maxAdminEntries}). */
    public int maxEntries(int qid) {
        return qid == 0 ? maxAdminEntries : maxQueueEntries;
    }

    private static void check(String field, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("invalid " + field + ": " + field + "=" + v + ", min=" + min
                    + ", max=" + max);
        }
    }
}
