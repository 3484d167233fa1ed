package io.rdmablock.node.target;

import io.rdmablock.node.failover.AnaState;
import io.rdmablock.rdma.fabric.DiscoveryLogDescriptor;
import io.rdmablock.rdma.fabric.LogPageDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.SqeDescriptor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet6Address;
import java.nio.ByteOrder;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Get Log Page (NVMe Base 2.0 section 5.16) on the admin queue. The host asks for (NUMD + 1) x 4 bytes from byte
 * offset LPO of the log; rdmablock returns that window, zero-filled past the end of the log. Pages:
 * <ul>
 * <li>I/O controller: 01h Error Information (one 64-byte entry, ELPE = 0: zeros; nothing is recorded), 02h SMART /
 *     Health Information (512 bytes; nsid 0, 1 or FFFFFFFFh: the controller's counters), 04h Changed Namespace List
 *     (4096 bytes: {@code [1]} while a size change has not been read with RAE = 0, else empty), 0Ch Asymmetric
 *     Namespace Access ({@link AnaLogDescriptor}: one group, ANAGRPID 1, the state this host sees,
 *     {@link Subsystem#anaStateFor}; LSP bit 0 RGO: no NSID list; any nsid);</li>
 * <li>discovery controller: 70h Discovery (NVMe-oF 1.1 section 5.3): the current discovery subsystem (SUBTYPE 3,
 *     EFLAGS DUPRETINFO) and every subsystem of this node whose allow-list admits the host's hostnqn.</li>
 * </ul>
 * Checks, each answered with its status: length above the admin data buffer (4096 bytes) -> Invalid Field; SGL
 * shorter than the length -> Data SGL Length Invalid; LID not served by this controller -> Invalid Field; LPO not
 * dword aligned or beyond the log -> Invalid Field; SMART nsid other than 0, 1, FFFFFFFFh -> Invalid Namespace.
 */
final class LogPages {
    /** SMART composite temperature: rdmablock has no sensor; 295 K (22 degrees C) keeps tools' checks quiet. */
    static final int COMPOSITE_TEMPERATURE_KELVIN = 295;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Discovery entries' PORTID: one NVM subsystem port per node. */
    static final int PORT_ID = 1;

    private LogPages() {
    }

    /** NEW: {@link Outcome#EXECUTE} or {@link Outcome#COMPLETE} (rejected): the data length and the keyed SGL. */
    static Outcome prepare(Request r, FabricQueue q) {
        long len = LogPageDescriptor.lengthBytes(r.sqe);
        if (len > q.dataBytesPerRequest) {
            return q.reject(r, Commands.INVALID_FIELD, "log page length (NUMD)", len, "max=" + q.dataBytesPerRequest
                    + " (admin data buffer)");
        }
        Outcome o = Commands.dataToHost(r, q, (int) len, false);
        if (o == Outcome.EXECUTE && r.transferBytes < len) {
            return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), "keyed SGL length",
                    r.transferBytes, "min=" + len + " (NUMD)");
        }
        return o;
    }

    /** READY_TO_EXECUTE: fills the first {@code r.transferBytes} of the data buffer ({@link Outcome#COMPLETE}). */
    static Outcome execute(Request r, FabricQueue q, TargetController c) {
        MemorySegment sqe = r.sqe;
        int lid = LogPageDescriptor.lid(sqe);
        long offset = LogPageDescriptor.offsetBytes(sqe);
        int len = r.transferBytes;
        boolean discovery = c.subsystem.isDiscovery();
        long logLength = switch (lid) {
            case LogPageDescriptor.LID_ERROR_INFORMATION -> discovery ? -1 : LogPageDescriptor.ERROR_ENTRY_LENGTH;
            case LogPageDescriptor.LID_SMART_HEALTH -> discovery ? -1 : LogPageDescriptor.SMART_LENGTH;
            case LogPageDescriptor.LID_CHANGED_NAMESPACE_LIST ->
                    discovery ? -1 : LogPageDescriptor.CHANGED_NAMESPACE_LIST_LENGTH;
            case AnaLogDescriptor.LID_ANA -> discovery ? -1 : AnaLogDescriptor.length(rgo(sqe));
            default -> -1;
        };
        List<Subsystem> listed = null;
        if (lid == LogPageDescriptor.LID_DISCOVERY && discovery) {
            listed = listedFor(q.target, c.hostnqn());
            logLength = DiscoveryLogDescriptor.HEADER_LENGTH + (long) (listed.size() + 1) * transports(q)
                    * DiscoveryLogDescriptor.ENTRY_LENGTH;
        }
        if (logLength < 0) {
            return q.reject(r, Commands.INVALID_FIELD, "lid", lid, discovery ? "supported=0x70 (discovery controller)"
                    : "supported=0x1,0x2,0x4,0xc");
        }
        if ((offset & 3) != 0 || Long.compareUnsigned(offset, logLength) > 0) {
            return q.reject(r, Commands.INVALID_FIELD,
                    "log page offset (LPO)", offset, "dword aligned, max=" + logLength
                    + ", lid=0x" + Integer.toHexString(lid));
        }
        MemorySegment out = r.dataBuffer.asSlice(0, len);
        out.fill((byte) 0);
        MemorySegment scratch = c.scratch();
        switch (lid) {
            case LogPageDescriptor.LID_ERROR_INFORMATION -> {
                // no errors are recorded: the one entry (ELPE = 0) is zeros, error count 0
            }
            case LogPageDescriptor.LID_SMART_HEALTH -> {
                int nsid = SqeDescriptor.nsid(sqe);
                if (nsid != 0 && nsid != Subsystem.NSID && nsid != 0xFFFFFFFF) {
                    return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_INVALID_NAMESPACE), "nsid",
                            Integer.toUnsignedLong(nsid), "valid=0,1,0xffffffff");
                }
                smart(scratch, c);
                window(scratch, logLength, offset, out);
            }
            case LogPageDescriptor.LID_CHANGED_NAMESPACE_LIST -> {
                scratch.asSlice(0, logLength).fill((byte) 0);
                if (c.changedNamespaceUnread()) {
                    scratch.set(U32, 0, Subsystem.NSID);
                }
                window(scratch, logLength, offset, out);
                if (!LogPageDescriptor.rae(sqe)) {
                    c.changedNamespaceRead();
                }
            }
            case AnaLogDescriptor.LID_ANA -> {
                Subsystem s = c.subsystem;
                // state before count: a change published in between shows the new state with the old count, and
                // the notice of the new count follows (the host reads again)
                AnaState state = s.anaStateFor(c.hostnqn());
                AnaLogDescriptor.encode(scratch, s.anaChangeCount(), state, rgo(sqe));
                window(scratch, logLength, offset, out);
            }
            default -> discovery(scratch, offset, out, q, c, listed);
        }
        return Outcome.COMPLETE;
    }

    /** LSP bit 0 of the ANA log page: Return Groups Only. */
    private static boolean rgo(MemorySegment sqe) {
        return (LogPageDescriptor.lsp(sqe) & AnaLogDescriptor.LSP_RGO) != 0;
    }

    /** Copies bytes [offset, min(offset + out size, logLength)) of {@code log} to {@code out} at 0. */
    private static void window(MemorySegment log, long logLength, long offset, MemorySegment out) {
        long n = Math.min(out.byteSize(), logLength - offset);
        if (n > 0) {
            MemorySegment.copy(log, offset, out, 0, n);
        }
    }

    private static void smart(MemorySegment log, TargetController c) {
        log.asSlice(0, LogPageDescriptor.SMART_LENGTH).fill((byte) 0);
        log.set(U16, LogPageDescriptor.SMART_COMPOSITE_TEMPERATURE,
                (short) COMPOSITE_TEMPERATURE_KELVIN);
        log.set(ValueLayout.JAVA_BYTE, LogPageDescriptor.SMART_AVAILABLE_SPARE, (byte) 100);
        log.set(ValueLayout.JAVA_BYTE, LogPageDescriptor.SMART_AVAILABLE_SPARE_THRESHOLD,
                (byte) 10);
        long[] io = c.ioCounters();
        LogPageDescriptor.smartCounter(log, LogPageDescriptor.SMART_DATA_UNITS_READ,
                LogPageDescriptor.dataUnits(io[IoCounters.READ_BYTES]));
        LogPageDescriptor.smartCounter(log, LogPageDescriptor.SMART_DATA_UNITS_WRITTEN,
                LogPageDescriptor.dataUnits(io[IoCounters.WRITTEN_BYTES]));
        LogPageDescriptor.smartCounter(log, LogPageDescriptor.SMART_HOST_READ_COMMANDS, io[IoCounters.READS]);
        LogPageDescriptor.smartCounter(log, LogPageDescriptor.SMART_HOST_WRITE_COMMANDS, io[IoCounters.WRITES]);
    }

    /** The subsystems of this node {@code hostnqn} may connect to, by subnqn. */
    static List<Subsystem> listedFor(Target t, String hostnqn) {
        List<Subsystem> out = new ArrayList<>();
        for (Subsystem s : t.subsystems()) {
            if (!s.isRemoved() && s.allowsHost(hostnqn)) {
                out.add(s);
            }
        }
        out.sort(Comparator.comparing(Subsystem::subnqn));
        return out;
    }

    /** Transports the discovery log lists: RDMA, and NVMe/TCP while the target listens for it ({@link TcpListener}). */
    private static int transports(FabricQueue q) {
        return q.target.tcpAddress == null ? 1 : 2;
    }

    /**
     * Discovery log window: header (record -1), then per transport (RDMA, then TCP when listening) the current
     * discovery subsystem's entry and one per subsystem in {@code listed} (NVMe-oF 1.1 section 5.3: an entry per
     * port; TRTYPE 1 RDMA with its TSAS, TRTYPE 3 TCP with TSAS SECTYPE 0, none).
     */
    private static void discovery(MemorySegment scratch, long offset, MemorySegment out, FabricQueue q,
                                  TargetController c, List<Subsystem> listed) {
        long end = offset + out.byteSize();
        int record = DiscoveryLogDescriptor.ENTRY_LENGTH;
        int perTransport = listed.size() + 1;
        int transports = transports(q);
        for (long k = offset / record; k * record < end && k <= (long) perTransport * transports; k++) {
            long start = k * record;
            MemorySegment rec = scratch.asSlice(0, record);
            if (k == 0) {
                DiscoveryLogDescriptor.header(rec, q.target.discoveryGeneration(), (long) perTransport * transports);
            } else {
                boolean tcp = (k - 1) / perTransport == 1;
                int j = (int) ((k - 1) % perTransport);
                InetSocketAddress local = tcp ? tcpAddress(q) : localAddress(q);
                String traddr = local.getAddress().getHostAddress();
                int percent = traddr.indexOf('%');
                if (percent >= 0) {
                    traddr = traddr.substring(0, percent); // IPv6 scope id: not part of TRADDR
                }
                int adrfam = local.getAddress() instanceof Inet6Address ? DiscoveryLogDescriptor.ADRFAM_IPV6
                        : DiscoveryLogDescriptor.ADRFAM_IPV4;
                boolean self = j == 0;
                DiscoveryLogDescriptor.entry(rec, new DiscoveryLogDescriptor.Entry(tcp ? DiscoveryLogDescriptor.TRTYPE_TCP
                        : DiscoveryLogDescriptor.TRTYPE_RDMA,
                        adrfam, self ? DiscoveryLogDescriptor.SUBTYPE_CURRENT_DISCOVERY
                                : DiscoveryLogDescriptor.SUBTYPE_NVM,
                        DiscoveryLogDescriptor.TREQ_SECURE_CHANNEL_NOT_REQUIRED, tcp ? PORT_ID + 1 : PORT_ID, 0xFFFF,
                        q.options.maxAdminEntries(), self ? DiscoveryLogDescriptor.EFLAGS_DUPRETINFO : 0,
                        Integer.toString(local.getPort()), self ? c.subsystem.subnqn()
                                : listed.get(j - 1).subnqn(), traddr,
                        tcp ? 0 : DiscoveryLogDescriptor.RDMA_QPTYPE_CONNECTED,
                        tcp ? 0 : DiscoveryLogDescriptor.RDMA_PRTYPE_NONE,
                        tcp ? 0 : DiscoveryLogDescriptor.RDMA_CMS_RDMA_CM));
            }
            long from = Math.max(offset, start);
            long to = Math.min(end, start + record);
            MemorySegment.copy(rec, from - start, out, from - offset, to - from);
        }
    }

    /**
     * The RDMA address the host reaches this node on: the queue's own on RDMA, the listener's otherwise (the
     * queue's IP with the listener's port when the listener's is a wildcard).
     */
    private static InetSocketAddress localAddress(FabricQueue q) {
        InetSocketAddress a = q.trtype() == DiscoveryLogDescriptor.TRTYPE_RDMA ? q.localAddress() : null;
        if (a == null || a.getAddress() == null || a.getAddress().isAnyLocalAddress()) {
            a = concrete(q.target.localAddress(), q);
        }
        return a;
    }

    /** The NVMe/TCP listener's address; the queue's IP when the listener's is a wildcard. */
    private static InetSocketAddress tcpAddress(FabricQueue q) {
        InetSocketAddress a = q.target.tcpAddress;
        if (a == null) { // closed meanwhile
            a = new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0);
        }
        return concrete(a, q);
    }

    private static InetSocketAddress concrete(InetSocketAddress a, FabricQueue q) {
        if (a.getAddress() != null && !a.getAddress().isAnyLocalAddress()) {
            return a;
        }
        InetSocketAddress own = q.localAddress();
        return own == null || own.getAddress() == null ? a : new InetSocketAddress(own.getAddress(), a.getPort());
    }
}
