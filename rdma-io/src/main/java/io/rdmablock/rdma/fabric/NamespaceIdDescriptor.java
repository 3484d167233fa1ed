package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Namespace Identification Descriptor list, the 4096-byte answer to Identify CNS 03h (NVMe Base 2.0 section 5.17.2.3,
 * Figures 278-279). A sequence of descriptors, each a 4-byte header and NIDL bytes of identifier, ended by a
 * descriptor with NIDL 0 (the zero-filled rest of the page).
 *
 * <pre>
 *  0 NIDT(1: 1 EUI64, 2 NGUID, 3 UUID, 4 CSI) 1 NIDL(1: 8, 16, 16, 1) 2 reserved(2) 4 NID(NIDL bytes)
 * rdmablock writes, in this order: EUI64 at 0 (12 bytes), NGUID at 12 (20), UUID at 32 (20), CSI at 52 (5);
 * bytes 57..4095 are 0.
 * </pre>
 * Linux ({@code nvme_identify_ns_descs}, {@code nvme_process_ns_desc}) rejects a descriptor whose NIDL does not
 * match its NIDT and stops at the first NIDL 0.
 */
public final class NamespaceIdDescriptor {
    public static final int LENGTH = 4096;
    public static final int HEADER_LENGTH = 4;
    public static final int NIDT_EUI64 = 1;
    public static final int NIDT_NGUID = 2;
    public static final int NIDT_UUID = 3;
    public static final int NIDT_CSI = 4;
    public static final int EUI64_LENGTH = 8;
    public static final int NGUID_LENGTH = 16;
    public static final int UUID_LENGTH = 16;
    public static final int CSI_LENGTH = 1;
    /** Command Set Identifier of the NVM Command Set. */
    public static final int CSI_NVM = 0;

    private NamespaceIdDescriptor() {
    }

    /** The identifiers of one namespace: EUI64 (8 bytes), NGUID (16), UUID (16, RFC 4122 byte order), CSI. */
    public record Ids(byte[] eui64, byte[] nguid, byte[] uuid, int csi) {
        public Ids {
            if (eui64.length != EUI64_LENGTH || nguid.length != NGUID_LENGTH || uuid.length != UUID_LENGTH) {
                throw new IllegalArgumentException("invalid namespace identifiers: eui64Bytes=" + eui64.length
                        + ", nguidBytes=" + nguid.length + ", uuidBytes=" + uuid.length + ", expected=8,16,16");
            }
        }
    }

    /** Writes the descriptor list for {@code ids} into {@code data} (4096 bytes, zeroed first). */
    public static void encode(MemorySegment data, Ids ids) {
        data.asSlice(0, LENGTH).fill((byte) 0);
        long off = put(data, 0, NIDT_EUI64, ids.eui64());
        off = put(data, off, NIDT_NGUID, ids.nguid());
        off = put(data, off, NIDT_UUID, ids.uuid());
        put(data, off, NIDT_CSI, new byte[] {(byte) ids.csi()});
    }

    private static long put(MemorySegment data, long off, int nidt, byte[] nid) {
        Wire.u8(data, off, nidt);
        Wire.u8(data, off + 1, nid.length);
        MemorySegment.copy(nid, 0, data, ValueLayout.JAVA_BYTE, off + HEADER_LENGTH, nid.length);
        return off + HEADER_LENGTH + nid.length;
    }

    /**
     * Reads a descriptor list as Linux does: stops at NIDL 0 or the end of the page; unknown NIDTs are skipped.
     *
     * @throws IllegalArgumentException when a known NIDT has the wrong NIDL
     */
    public static Ids decode(MemorySegment data) {
        byte[] eui64 = new byte[EUI64_LENGTH];
        byte[] nguid = new byte[NGUID_LENGTH];
        byte[] uuid = new byte[UUID_LENGTH];
        int csi = -1;
        long off = 0;
        while (off + HEADER_LENGTH <= LENGTH) {
            int nidt = Wire.u8(data, off);
            int nidl = Wire.u8(data, off + 1);
            if (nidl == 0) {
                break;
            }
            MemorySegment nid = data.asSlice(off + HEADER_LENGTH, nidl);
            switch (nidt) {
                case NIDT_EUI64 -> copy(nid, eui64, nidt);
                case NIDT_NGUID -> copy(nid, nguid, nidt);
                case NIDT_UUID -> copy(nid, uuid, nidt);
                case NIDT_CSI -> {
                    if (nidl != CSI_LENGTH) {
                        throw new IllegalArgumentException("invalid CSI descriptor: nidl=" + nidl + ", expected=1");
                    }
                    csi = Wire.u8(nid, 0);
                }
                default -> {
                }
            }
            off += HEADER_LENGTH + nidl;
        }
        return new Ids(eui64, nguid, uuid, csi);
    }

    private static void copy(MemorySegment nid, byte[] into, int nidt) {
        if (nid.byteSize() != into.length) {
            throw new IllegalArgumentException("invalid namespace identification descriptor: nidt=" + nidt
                    + ", nidl=" + nid.byteSize() + ", expected=" + into.length);
        }
        MemorySegment.copy(nid, ValueLayout.JAVA_BYTE, 0, into, 0, into.length);
    }
}
