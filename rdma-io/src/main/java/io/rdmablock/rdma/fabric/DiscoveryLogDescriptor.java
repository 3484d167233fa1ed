package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * Discovery Log Page, log identifier 70h (NVMe-oF 1.1 section 5.3, Figures 38-39; TSAS for RDMA: RDMA transport 1.0
 * Figure 7): a 1024-byte header followed by NUMREC 1024-byte entries.
 *
 * <pre>
 * header: 0 GENCTR(8) 8 NUMREC(8) 16 RECFMT(2: 0) 18..1023 reserved
 * entry:  0 TRTYPE(1: 1 RDMA) 1 ADRFAM(1: 1 IPv4, 2 IPv6) 2 SUBTYPE(1: 2 NVM subsystem, 3 current discovery subsystem)
 *         3 TREQ(1: bits 1:0 secure channel, 10b not required; bit 2 = 0: SQ flow control cannot be disabled)
 *         4 PORTID(2) 6 CNTLID(2: FFFFh dynamic) 8 ASQSZ(2: admin SQ entries, >= 32) 10 EFLAGS(2: bit 0 DUPRETINFO)
 *         32 TRSVCID(32, ASCII, space padded) 256 SUBNQN(256, NUL terminated) 512 TRADDR(256, ASCII, space padded)
 *         768 TSAS(256): 768 RDMA_QPTYPE(1: 1 reliable connected) 769 RDMA_PRTYPE(1: 1 no provider specified)
 *                        770 RDMA_CMS(1: 1 RDMA_IP_CM) 776 RDMA_PKEY(2)
 * </pre>
 * The space padding of TRSVCID and TRADDR is the spec's ASCII field rule (SPDK does the same); libnvme strips trailing
 * spaces ({@code sanitize_discovery_log_entry}), nvmet pads with NULs.
 */
public final class DiscoveryLogDescriptor {
    public static final int HEADER_LENGTH = 1024;
    public static final int ENTRY_LENGTH = 1024;
    public static final int GENCTR = 0;
    public static final int NUMREC = 8;
    public static final int RECFMT = 16;

    public static final int TRTYPE = 0;
    public static final int ADRFAM = 1;
    public static final int SUBTYPE = 2;
    public static final int TREQ = 3;
    public static final int PORTID = 4;
    public static final int CNTLID = 6;
    public static final int ASQSZ = 8;
    public static final int EFLAGS = 10;
    public static final int TRSVCID = 32;
    public static final int TRSVCID_LENGTH = 32;
    public static final int SUBNQN = 256;
    public static final int TRADDR = 512;
    public static final int TRADDR_LENGTH = 256;
    public static final int TSAS = 768;
    public static final int RDMA_QPTYPE = TSAS;
    public static final int RDMA_PRTYPE = TSAS + 1;
    public static final int RDMA_CMS = TSAS + 2;
    public static final int RDMA_PKEY = TSAS + 8;

    public static final int TRTYPE_RDMA = 1;
    /** NVMe/TCP (TSAS: SECTYPE byte 0 = 0, no security: an entry with qptype, prtype and cms 0). */
    public static final int TRTYPE_TCP = 3;
    public static final int ADRFAM_IPV4 = 1;
    public static final int ADRFAM_IPV6 = 2;
    public static final int SUBTYPE_NVM = 2;
    public static final int SUBTYPE_CURRENT_DISCOVERY = 3;
    public static final int TREQ_SECURE_CHANNEL_NOT_REQUIRED = 0x2;
    public static final int EFLAGS_DUPRETINFO = 1;
    public static final int RDMA_QPTYPE_CONNECTED = 1;
    public static final int RDMA_PRTYPE_NONE = 1;
    public static final int RDMA_CMS_RDMA_CM = 1;
    /** The well-known discovery subsystem NQN (NVMe Base 2.0 section 4.5). */
    public static final String DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery";

    private DiscoveryLogDescriptor() {
    }

    /** One entry, decoded. {@code traddr} and {@code trsvcid} without padding. */
    public record Entry(int trtype, int adrfam, int subtype, int treq, int portId, int cntlid, int asqsz, int eflags,
                        String trsvcid, String subnqn, String traddr, int qptype, int prtype, int cms) {
    }

    /** Writes the 1024-byte header into {@code header} (zeroed first). */
    public static void header(MemorySegment header, long genctr, long numrec) {
        header.asSlice(0, HEADER_LENGTH).fill((byte) 0);
        Wire.u64(header, GENCTR, genctr);
        Wire.u64(header, NUMREC, numrec);
        Wire.u16(header, RECFMT, 0);
    }

    public static long genctr(MemorySegment header) {
        return Wire.u64(header, GENCTR);
    }

    public static long numrec(MemorySegment header) {
        return Wire.u64(header, NUMREC);
    }

    /**
     * Writes one RDMA entry into {@code entry} (1024 bytes, zeroed first): TSAS qptype connected, no provider, RDMA CM.
     *
     * @throws IllegalArgumentException when a string does not fit its field
     */
    public static void entry(MemorySegment entry, Entry e) {
        entry.asSlice(0, ENTRY_LENGTH).fill((byte) 0);
        Wire.u8(entry, TRTYPE, e.trtype());
        Wire.u8(entry, ADRFAM, e.adrfam());
        Wire.u8(entry, SUBTYPE, e.subtype());
        Wire.u8(entry, TREQ, e.treq());
        Wire.u16(entry, PORTID, e.portId());
        Wire.u16(entry, CNTLID, e.cntlid());
        Wire.u16(entry, ASQSZ, e.asqsz());
        Wire.u16(entry, EFLAGS, e.eflags());
        ascii(entry, TRSVCID, TRSVCID_LENGTH, e.trsvcid(), "trsvcid");
        Wire.string(entry, SUBNQN, 256, e.subnqn(), "subnqn");
        ascii(entry, TRADDR, TRADDR_LENGTH, e.traddr(), "traddr");
        Wire.u8(entry, RDMA_QPTYPE, e.qptype());
        Wire.u8(entry, RDMA_PRTYPE, e.prtype());
        Wire.u8(entry, RDMA_CMS, e.cms());
    }

    public static Entry entry(MemorySegment entry) {
        return new Entry(Wire.u8(entry, TRTYPE), Wire.u8(entry, ADRFAM), Wire.u8(entry, SUBTYPE),
                Wire.u8(entry, TREQ), Wire.u16(entry, PORTID), Wire.u16(entry, CNTLID), Wire.u16(entry, ASQSZ),
                Wire.u16(entry, EFLAGS), Wire.string(entry, TRSVCID, TRSVCID_LENGTH).strip(),
                Wire.string(entry, SUBNQN, 256), Wire.string(entry, TRADDR, TRADDR_LENGTH).strip(),
                Wire.u8(entry, RDMA_QPTYPE), Wire.u8(entry, RDMA_PRTYPE), Wire.u8(entry, RDMA_CMS));
    }

    private static void ascii(MemorySegment s, int off, int len, String v, String field) {
        if (v.getBytes(StandardCharsets.US_ASCII).length > len) {
            throw new IllegalArgumentException("invalid " + field + ": lengthBytes=" + v.length() + ", max=" + len);
        }
        Wire.spacePadded(s, off, len, v);
    }
}
