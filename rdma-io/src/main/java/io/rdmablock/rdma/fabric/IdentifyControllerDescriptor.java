package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;

/**
 * Identify Controller data structure, 4096 bytes (NVMe Base 2.0 section 5.17.2.1, Figure 275; fabrics fields from
 * NVMe-oF 1.1 Figure 28). Only the fields rdmablock sets or reads are named here; the rest are zero.
 *
 * <pre>
 *  0 VID(2) 2 SSVID(2) 4 SN(20, ASCII space padded) 24 MN(40) 64 FR(8) 76 CMIC(1: bit 1 multiple controllers)
 *  77 MDTS(1: 2^n x 4 KiB, 0 = no limit) 78 CNTLID(2) 80 VER(4) 92 OAES(4: bit 8 namespace attribute notices)
 *  96 CTRATT(4: bit 6 TBKAS, traffic-based keep-alive) 111 CNTRLTYPE(1: 1 I/O, 2 discovery) 259 AERL(1, 0-based)
 *  261 LPA(1: bit 0 SMART per namespace, bit 2 extended data (NUMDU, LPOL/LPOU)) 262 ELPE(1, 0-based)
 *  320 KAS(2: keep-alive granularity, 100 ms units) 512 SQES(1) 513 CQES(1)
 *  514 MAXCMD(2) 516 NN(4) 520 ONCS(2: bit 2 DSM, bit 3 Write Zeroes) 525 VWC(1: bit 0 volatile write cache)
 *  536 SGLS(4: bit 2 keyed SGL, bit 20 offset (in-capsule)) 768 SUBNQN(256)
 *  1792 IOCCSZ(4: I/O command capsule size in 16-byte units = (64 + in-capsule data) / 16)
 *  1796 IORCSZ(4: response capsule size in 16-byte units = 1) 1800 ICDOFF(2) 1803 MSDBD(1)
 * </pre>
 */
public final class IdentifyControllerDescriptor {
    public static final int LENGTH = 4096;
    public static final int VID = 0;
    public static final int SN = 4;
    public static final int MN = 24;
    public static final int FR = 64;
    public static final int CMIC = 76;
    public static final int MDTS = 77;
    public static final int CNTLID = 78;
    public static final int VER = 80;
    public static final int OAES = 92;
    public static final int CTRATT = 96;
    public static final int CNTRLTYPE = 111;
    public static final int AERL = 259;
    public static final int LPA = 261;
    public static final int ELPE = 262;
    public static final int KAS = 320;
    public static final int SQES = 512;
    public static final int CQES = 513;
    public static final int MAXCMD = 514;
    public static final int NN = 516;
    public static final int ONCS = 520;
    public static final int VWC = 525;
    public static final int SGLS = 536;
    public static final int SUBNQN = 768;
    public static final int IOCCSZ = 1792;
    public static final int IORCSZ = 1796;
    public static final int ICDOFF = 1800;
    public static final int MSDBD = 1803;

    /** CMIC bit 1: the NVM subsystem may contain two or more controllers (several hosts, several nodes). */
    public static final int CMIC_MULTI_CONTROLLER = 1 << 1;
    /** OAES bit 8: Namespace Attribute Notices (AEN info 00h, log page 04h). */
    public static final int OAES_NAMESPACE_ATTRIBUTE = 1 << 8;
    /** CNTRLTYPE (NVMe Base 2.0 Figure 275 byte 111). */
    public static final int CNTRLTYPE_IO = 1;
    public static final int CNTRLTYPE_DISCOVERY = 2;
    /** LPA bit 0: SMART / Health Information per namespace; bit 2: extended data for Get Log Page. */
    public static final int LPA_SMART_PER_NAMESPACE = 1 << 0;
    public static final int LPA_EXTENDED_DATA = 1 << 2;
    /** CTRATT bit 6: any command on any queue of the association restarts the keep-alive timer. */
    public static final int CTRATT_TBKAS = 1 << 6;
    public static final int ONCS_DSM = 1 << 2;
    public static final int ONCS_WRITE_ZEROES = 1 << 3;
    /** NVMe 1.4 version value (major 1, minor 4). */
    public static final int VERSION_1_4 = 0x00010400;

    private IdentifyControllerDescriptor() {
    }

    /** The values rdmablock advertises, decoded. {@code mdtsBytes} 0 = no limit. */
    public record Info(String serial, String model, String firmware, int cntlid, long mdtsBytes, int maxCmd,
                       int namespaceCount, boolean volatileWriteCache, String subnqn, int inCapsuleDataBytes) {
    }

    /** Encodes {@code info} into {@code data} (4096 bytes, zeroed first). mdtsBytes must be 0 or 4 KiB x 2^n. */
    public static void encode(MemorySegment data, Info info) {
        data.asSlice(0, LENGTH).fill((byte) 0);
        Wire.u16(data, VID, 0x1b36);
        Wire.spacePadded(data, SN, 20, info.serial());
        Wire.spacePadded(data, MN, 40, info.model());
        Wire.spacePadded(data, FR, 8, info.firmware());
        Wire.u8(data, MDTS, mdtsExponent(info.mdtsBytes()));
        Wire.u16(data, CNTLID, info.cntlid());
        Wire.u32(data, VER, VERSION_1_4);
        Wire.u32(data, CTRATT, CTRATT_TBKAS);
        Wire.u16(data, KAS, 1);
        Wire.u8(data, SQES, 0x66);
        Wire.u8(data, CQES, 0x44);
        Wire.u16(data, MAXCMD, info.maxCmd());
        Wire.u32(data, NN, info.namespaceCount());
        Wire.u16(data, ONCS, ONCS_DSM | ONCS_WRITE_ZEROES);
        Wire.u8(data, VWC, info.volatileWriteCache() ? 1 : 0);
        Wire.u32(data, SGLS, (1 << 0) | (1 << 2) | (1 << 20));
        Wire.string(data, SUBNQN, 256, info.subnqn(), "subnqn");
        Wire.u32(data, IOCCSZ, (SqeDescriptor.LENGTH + info.inCapsuleDataBytes()) / 16);
        Wire.u32(data, IORCSZ, 1);
        Wire.u16(data, ICDOFF, 0);
        Wire.u8(data, MSDBD, 1);
    }

    /**
     * Sets the controller-model fields after {@link #encode}: CMIC (byte 76), OAES (92, 4 bytes), CNTRLTYPE (111),
     * AERL (259, 0-based), LPA (261). ELPE (262) stays 0: one Error Information entry.
     */
    public static void controllerModel(MemorySegment data, int cmic, int oaes, int cntrltype, int aerl, int lpa) {
        Wire.u8(data, CMIC, cmic);
        Wire.u32(data, OAES, oaes);
        Wire.u8(data, CNTRLTYPE, cntrltype);
        Wire.u8(data, AERL, aerl);
        Wire.u8(data, LPA, lpa);
    }

    public static int cmic(MemorySegment data) {
        return Wire.u8(data, CMIC);
    }

    public static int oaes(MemorySegment data) {
        return Wire.u32(data, OAES);
    }

    public static int cntrltype(MemorySegment data) {
        return Wire.u8(data, CNTRLTYPE);
    }

    public static int lpa(MemorySegment data) {
        return Wire.u8(data, LPA);
    }

    public static int kas(MemorySegment data) {
        return Wire.u16(data, KAS);
    }

    public static int sgls(MemorySegment data) {
        return Wire.u32(data, SGLS);
    }

    public static Info decode(MemorySegment data) {
        int mdts = Wire.u8(data, MDTS);
        long mdtsBytes = mdts == 0 ? 0 : 4096L << mdts;
        return new Info(Wire.string(data, SN, 20).strip(), Wire.string(data, MN, 40).strip(),
                Wire.string(data, FR, 8).strip(), Wire.u16(data, CNTLID), mdtsBytes, Wire.u16(data, MAXCMD),
                Wire.u32(data, NN), (Wire.u8(data, VWC) & 1) != 0, Wire.string(data, SUBNQN, 256),
                Wire.u32(data, IOCCSZ) * 16 - SqeDescriptor.LENGTH);
    }

    /** MDTS exponent for {@code mdtsBytes} (4 KiB minimum memory page size). */
    public static int mdtsExponent(long mdtsBytes) {
        if (mdtsBytes == 0) {
            return 0;
        }
        if (mdtsBytes < 4096 || Long.bitCount(mdtsBytes) != 1) {
            throw new IllegalArgumentException("invalid mdtsBytes: mdtsBytes=" + mdtsBytes
                    + ", must be 0 or 4096 x 2^n");
        }
        return Long.numberOfTrailingZeros(mdtsBytes) - 12;
    }
}
