package io.rdmablock.node.target;

import io.rdmablock.node.failover.AnaState;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The Asymmetric Namespace Access log page, log identifier 0Ch (NVMe 1.4 §5.14.1.12: log page, group descriptor; Linux
 * {@code struct nvme_ana_rsp_hdr}, {@code struct nvme_ana_group_desc}; nvmet {@code nvmet_execute_get_log_page_ana}).
 * Little endian. rdmablock has one ANA group (ANAGRPID 1) holding nsid 1, so the page is 56 bytes, or 52 with RGO:
 *
 * <pre>
 * header (16 bytes)
 *   0  Change Count (8)           bumped on every change of the published ANA state (Subsystem#anaChangeCount)
 *   8  Number of ANA Group Descriptors (2) = 1
 *  10  reserved (6)
 * group descriptor at 16 (32 bytes + 4 per NSID)
 *   0  ANAGRPID (4) = 1
 *   4  Number of NSID Values, NNSID (4) = 1, or 0 with RGO (LSP bit 0, "Return Groups Only")
 *   8  Change Count (8)           = the header's
 *  16  ANA State (1, bits 3:0: AnaState#code)
 *  17  reserved (15)
 *  32  NSID list (4 x NNSID) = [1], absent with RGO
 * </pre>
 */
final class AnaLogDescriptor {
    /** Log identifier of the ANA log page. */
    static final int LID_ANA = 0x0C;
    /** LSP bit 0 (CDW10 bit 8): Return Groups Only, no NSID list. */
    static final int LSP_RGO = 1;
    static final int HEADER_LENGTH = 16;
    static final int HEADER_CHANGE_COUNT = 0;
    static final int HEADER_GROUP_COUNT = 8;
    static final int GROUP_LENGTH = 32;
    static final int GROUP_ANAGRPID = 0;
    static final int GROUP_NNSID = 4;
    static final int GROUP_CHANGE_COUNT = 8;
    static final int GROUP_STATE = 16;
    static final int GROUP_NSIDS = 32;
    /** rdmablock's one ANA group. */
    static final int ANAGRPID = 1;

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private AnaLogDescriptor() {
    }

    /** Length of the page: header, one group, and (without RGO) one NSID. */
    static int length(boolean rgo) {
        return HEADER_LENGTH + GROUP_LENGTH + (rgo ? 0 : 4);
    }

    /** Writes the whole page ({@link #length} bytes) at offset 0 of {@code log}. */
    static void encode(MemorySegment log, long changeCount, AnaState state, boolean rgo) {
        log.asSlice(0, length(rgo)).fill((byte) 0);
        log.set(U64, HEADER_CHANGE_COUNT, changeCount);
        log.set(U16, HEADER_GROUP_COUNT, (short) 1);
        int g = HEADER_LENGTH;
        log.set(U32, g + GROUP_ANAGRPID, ANAGRPID);
        log.set(U32, g + GROUP_NNSID, rgo ? 0 : 1);
        log.set(U64, g + GROUP_CHANGE_COUNT, changeCount);
        log.set(ValueLayout.JAVA_BYTE, g + GROUP_STATE, (byte) state.code());
        if (!rgo) {
            log.set(U32, g + GROUP_NSIDS, Subsystem.NSID);
        }
    }
}
