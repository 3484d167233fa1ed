package io.rdmablock.initiator;

import io.rdmablock.rdma.verbs.VerbsProvider;

/**
 * Options of {@link NvmeBlockDevice#open}: queue counts and sizes, timeouts and the verbs provider. Immutable; change
 * a value with its wither ({@code DeviceOptions.defaults().ioQueues(4).keepAliveTimeoutMs(6000)}). Every value is
 * validated by its wither with an {@link IllegalArgumentException} naming the field and its bounds.
 *
 * @param ioQueues           I/O queues (qid 1..N), each one RC queue pair and one poller thread; 1 .. 64, default 2
 * @param queueEntries       entries per I/O queue (hrqsize; sqsize on the wire is this minus one); at most
 *                           {@code queueEntries - 1} commands are outstanding per queue; 2 .. 1024, default 128
 * @param adminQueueEntries  entries of the admin queue (qid 0); 2 .. 32, default 32
 * @param keepAliveTimeoutMs KATO sent in the admin Connect; a Keep Alive goes out every KATO/2; 0 disables;
 *                           default 10 000
 * @param commandTimeoutMs   a command outstanding this long fails with {@link java.util.concurrent.TimeoutException}
 *                           and the association is reset (the other commands are resubmitted); 0 disables;
 *                           default 30 000
 * @param reconnectDelayMs   wait before each reconnect attempt after the association was lost; default 2 000
 * @param ctrlLossTimeoutMs  after this long without a live association, outstanding and new I/O fail with
 *                           {@link DeviceLostException}; default 60 000
 * @param connectTimeoutMs   bound of every connection-setup step (address resolution, CM connect, Connect command,
 *                           admin commands); default 5 000
 * @param providerMode       {@code auto | soft | ffm | memory} (memory: a node in the same JVM); null = {@link io.rdmablock.rdma.verbs.Providers#configuredMode()}
 * @param provider           a provider to use (not closed by the device); overrides {@code providerMode} when set
 * @param maxBufferBytes     largest buffer {@link BlockDevice#allocateBuffer} hands out; default 256 MiB
 * @param nsid               namespace id to open; 0 (default) = nsid 1 when it is active, else the first active one
 *                           (Identify CNS 02h); 1 .. FFFFFFFEh
 * @param pathTimeoutMs      multipath only (a volume with several copies, docs/failover.md): an I/O outstanding this
 *                           long on a path fences the path (its queue pairs are closed) and the I/O moves to another
 *                           path; replaces commandTimeoutMs there; 0 disables; 0 .. 3 600 000, default 1 000
 * @param failoverTimeoutMs  multipath only: how long I/O waits for an Optimized path after a failover trigger before
 *                           the device is lost ({@link DeviceLostException}); 1 .. 86 400 000, default 30 000
 * @param dhchapSecret       the host's DH-HMAC-CHAP secret for NVMe in-band authentication, used on every queue when
 *                           the node asks for it (Connect AUTHREQ.ATR); null (default) = none: such a node then refuses
 *                           the connect with Authentication Required ({@link io.rdmablock.nvmf.host.QueueAuthenticator})
 * @param dhchapCtrlSecret   the node's secret for bidirectional authentication (the host checks the node too); null =
 *                           unidirectional
 */
public record DeviceOptions(int ioQueues, int queueEntries, int adminQueueEntries, long keepAliveTimeoutMs,
                            long commandTimeoutMs, long reconnectDelayMs, long ctrlLossTimeoutMs,
                            long connectTimeoutMs, String providerMode, VerbsProvider provider, long maxBufferBytes,
                            int nsid, long pathTimeoutMs, long failoverTimeoutMs,
                            io.rdmablock.nvme.auth.DhchapSecret dhchapSecret,
                            io.rdmablock.nvme.auth.DhchapSecret dhchapCtrlSecret) {

    public DeviceOptions {
        check("ioQueues", ioQueues, 1, 64);
        check("queueEntries", queueEntries, 2, 1024);
        check("adminQueueEntries", adminQueueEntries, 2, 32);
        check("keepAliveTimeoutMs", keepAliveTimeoutMs, 0, 3_600_000);
        check("commandTimeoutMs", commandTimeoutMs, 0, 3_600_000);
        check("reconnectDelayMs", reconnectDelayMs, 0, 3_600_000);
        check("ctrlLossTimeoutMs", ctrlLossTimeoutMs, 0, 86_400_000);
        check("connectTimeoutMs", connectTimeoutMs, 1, 3_600_000);
        check("maxBufferBytes", maxBufferBytes, 4096, 1L << 40);
        check("nsid", Integer.toUnsignedLong(nsid), 0, 0xFFFFFFFEL);
        check("pathTimeoutMs", pathTimeoutMs, 0, 3_600_000);
        check("failoverTimeoutMs", failoverTimeoutMs, 1, 86_400_000);
    }

    /** The defaults listed on the record components. */
    public static DeviceOptions defaults() {
        return new DeviceOptions(2, 128, 32, 10_000, 30_000, 2_000, 60_000, 5_000, null, null, 256L << 20, 0, 1_000,
                30_000, null, null);
    }

    public DeviceOptions ioQueues(int v) {
        return new DeviceOptions(v, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, maxBufferBytes, nsid,
                pathTimeoutMs, failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions queueEntries(int v) {
        return new DeviceOptions(ioQueues, v, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, maxBufferBytes, nsid,
                pathTimeoutMs, failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions adminQueueEntries(int v) {
        return new DeviceOptions(ioQueues, queueEntries, v, keepAliveTimeoutMs, commandTimeoutMs, reconnectDelayMs,
                ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, maxBufferBytes, nsid, pathTimeoutMs,
                failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions keepAliveTimeoutMs(long v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, v, commandTimeoutMs, reconnectDelayMs,
                ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, maxBufferBytes, nsid, pathTimeoutMs,
                failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions commandTimeoutMs(long v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, v, reconnectDelayMs,
                ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, maxBufferBytes, nsid, pathTimeoutMs,
                failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions reconnectDelayMs(long v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs, v,
                ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, maxBufferBytes, nsid, pathTimeoutMs,
                failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions ctrlLossTimeoutMs(long v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, v, connectTimeoutMs, providerMode, provider, maxBufferBytes, nsid, pathTimeoutMs,
                failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions connectTimeoutMs(long v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, ctrlLossTimeoutMs, v, providerMode, provider, maxBufferBytes, nsid, pathTimeoutMs,
                failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions providerMode(String v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, ctrlLossTimeoutMs, connectTimeoutMs, v, provider, maxBufferBytes, nsid,
                pathTimeoutMs, failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions provider(VerbsProvider v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, ctrlLossTimeoutMs, connectTimeoutMs, providerMode, v, maxBufferBytes, nsid,
                pathTimeoutMs, failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions maxBufferBytes(long v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, v, nsid, pathTimeoutMs,
                failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    /** @param v the namespace to use; 0 = nsid 1 when active, else the first active one */
    public DeviceOptions nsid(int v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, maxBufferBytes, v,
                pathTimeoutMs, failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions pathTimeoutMs(long v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, maxBufferBytes, nsid, v,
                failoverTimeoutMs, dhchapSecret, dhchapCtrlSecret);
    }

    public DeviceOptions failoverTimeoutMs(long v) {
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, maxBufferBytes, nsid,
                pathTimeoutMs, v, dhchapSecret, dhchapCtrlSecret);
    }

    /** DH-HMAC-CHAP secrets: the host's ({@code --dhchap-secret}) and, for bidirectional, the node's; null = none. */
    public DeviceOptions dhchap(io.rdmablock.nvme.auth.DhchapSecret host,
                                io.rdmablock.nvme.auth.DhchapSecret ctrl) {
        if (ctrl != null && host == null) {
            throw new IllegalArgumentException("invalid dhchap: a controller secret needs a host secret");
        }
        return new DeviceOptions(ioQueues, queueEntries, adminQueueEntries, keepAliveTimeoutMs, commandTimeoutMs,
                reconnectDelayMs, ctrlLossTimeoutMs, connectTimeoutMs, providerMode, provider, maxBufferBytes, nsid,
                pathTimeoutMs, failoverTimeoutMs, host, ctrl);
    }

    private static void check(String field, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("invalid " + field + ": " + field + "=" + v + ", min=" + min
                    + ", max=" + max);
        }
    }
}
