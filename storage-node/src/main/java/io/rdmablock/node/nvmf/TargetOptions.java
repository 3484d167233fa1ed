package io.rdmablock.node.nvmf;

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
 * @param idleSpinIterations   empty polling rounds before a poller starts waiting
 * @param idleWaitNs           how long an idle poller waits (CQ event or park) before polling again
 * @param keepAliveGraceMs     a controller is destroyed when no admin command arrived for KATO + this
 * @param connectTimeoutNs     accept / handshake timeout of the connection manager
 * @param cntlidMin            smallest controller id this node allocates, 1-{@value #MAX_CNTLID}
 * @param cntlidMax            largest controller id this node allocates, cntlidMin-{@value #MAX_CNTLID} (FFF0h-FFFFh
 *                             are reserved, NVMe-oF 1.1 §4.2). Nodes exporting the same subsystem use disjoint ranges
 *                             so a multipath host never sees one cntlid twice in a subsystem (docs/failover.md)
 */
public record TargetOptions(int maxQueueEntries, int maxAdminEntries, int inCapsuleDataBytes, int mdtsBytes,
                            int maxIoQueues, int pollers, int idleSpinIterations, long idleWaitNs,
                            long keepAliveGraceMs, long connectTimeoutNs, int cntlidMin, int cntlidMax) {
    /** Largest cntlid of the dynamic controller model (NVMe-oF 1.1: FFF0h-FFFFh are reserved). */
    public static final int MAX_CNTLID = 0xFFEF;

    /** As the canonical constructor with the whole cntlid range, 1-{@value #MAX_CNTLID}. */
    public TargetOptions(int maxQueueEntries, int maxAdminEntries, int inCapsuleDataBytes, int mdtsBytes,
                         int maxIoQueues, int pollers, int idleSpinIterations, long idleWaitNs,
                         long keepAliveGraceMs, long connectTimeoutNs) {
        this(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues, pollers,
                idleSpinIterations, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, 1, MAX_CNTLID);
    }

    public TargetOptions {
        checkCntlidRange(cntlidMin, cntlidMax);
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
        check("idleSpinIterations", idleSpinIterations, 0, 1_000_000);
        if (idleWaitNs < 1_000 || idleWaitNs > 100_000_000) {
            throw new IllegalArgumentException("invalid idleWaitNs: idleWaitNs=" + idleWaitNs
                    + ", min=1000, max=100000000");
        }
        if (keepAliveGraceMs < 0 || connectTimeoutNs <= 0) {
            throw new IllegalArgumentException("invalid timeouts: keepAliveGraceMs=" + keepAliveGraceMs
                    + ", connectTimeoutNs=" + connectTimeoutNs);
        }
    }

    /** Defaults: 128 entries, admin 32, 8 KiB in-capsule, MDTS 128 KiB, 64 I/O queues, 2 pollers. */
    public static TargetOptions defaults() {
        return new TargetOptions(128, 32, 8192, 128 * 1024, 64, 2, 200, 100_000, 1000, 5_000_000_000L);
    }

    public TargetOptions withMaxQueueEntries(int entries) {
        return new TargetOptions(entries, Math.min(maxAdminEntries, entries), inCapsuleDataBytes, mdtsBytes,
                maxIoQueues, pollers, idleSpinIterations, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, cntlidMin,
                cntlidMax);
    }

    public TargetOptions withPollers(int n) {
        return new TargetOptions(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues, n,
                idleSpinIterations, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, cntlidMin, cntlidMax);
    }

    public TargetOptions withKeepAliveGraceMs(long ms) {
        return new TargetOptions(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues,
                pollers, idleSpinIterations, idleWaitNs, ms, connectTimeoutNs, cntlidMin, cntlidMax);
    }

    /**
     * The controller ids this node allocates, {@code min..max} inclusive.
     *
     * @throws IllegalArgumentException unless 1 &lt;= min &lt;= max &lt;= {@value #MAX_CNTLID}
     */
    public TargetOptions withCntlidRange(int min, int max) {
        return new TargetOptions(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues,
                pollers, idleSpinIterations, idleWaitNs, keepAliveGraceMs, connectTimeoutNs, min, max);
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
