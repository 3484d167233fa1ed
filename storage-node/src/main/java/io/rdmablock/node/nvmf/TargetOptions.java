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
 */
public record TargetOptions(int maxQueueEntries, int maxAdminEntries, int inCapsuleDataBytes, int mdtsBytes,
                            int maxIoQueues, int pollers, int idleSpinIterations, long idleWaitNs,
                            long keepAliveGraceMs, long connectTimeoutNs) {

    public TargetOptions {
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
                maxIoQueues, pollers, idleSpinIterations, idleWaitNs, keepAliveGraceMs, connectTimeoutNs);
    }

    public TargetOptions withPollers(int n) {
        return new TargetOptions(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues, n,
                idleSpinIterations, idleWaitNs, keepAliveGraceMs, connectTimeoutNs);
    }

    public TargetOptions withKeepAliveGraceMs(long ms) {
        return new TargetOptions(maxQueueEntries, maxAdminEntries, inCapsuleDataBytes, mdtsBytes, maxIoQueues,
                pollers, idleSpinIterations, idleWaitNs, ms, connectTimeoutNs);
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
