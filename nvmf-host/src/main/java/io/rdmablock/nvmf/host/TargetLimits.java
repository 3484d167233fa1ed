package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;

/**
 * The limits a controller states, as the host applies them (any target: rdmablock's node, Linux nvmet, SPDK).
 *
 * <ul>
 *   <li>CAP (NVMe Base 2.0 section 3.1.3.1): MQES bits 15:0 (largest queue, 0-based), TO bits 31:24 (CSTS.RDY
 *   timeout, 500 ms units), CSS bit 37 (NVM command set).</li>
 *   <li>Identify Controller (Base Figure 275, NVMe-oF 1.1 Figure 28): MAXCMD (byte 514, outstanding commands per
 *   queue; 0 = not reported), MDTS (byte 77), SGLS (byte 536, bit 20: SGL Data Block with offset, i.e. in-capsule
 *   data), IOCCSZ (byte 1792, 16-byte units), ICDOFF (byte 1800, 16-byte units after the SQE).</li>
 * </ul>
 *
 * <p>{@code maxQueueEntries} = min(MQES + 1, MAXCMD + 1): a queue of E entries has at most E - 1 commands outstanding.
 * {@code inCapsuleBytes} = IOCCSZ x 16 - 64 on I/O queues, 0 when SGLS bit 20 is clear or ICDOFF is not 0 (as Linux
 * {@code nvme_rdma_setup_ctrl}, which refuses ICDOFF != 0, and {@code use_inline_data}). The admin queue never
 * carries in-capsule data (Linux nvmet gives it none).
 *
 * @param maxQueueEntries entries of the largest I/O queue the controller accepts (at least 1)
 * @param mdtsBytes       largest data transfer of one command in bytes (0 = no limit)
 * @param inCapsuleBytes  in-capsule data bytes an I/O command may carry behind its SQE (0 = none)
 */
public record TargetLimits(int maxQueueEntries, long mdtsBytes, int inCapsuleBytes) {
    private static final Logger LOG = LoggerFactory.getLogger(TargetLimits.class);
    /** SGLS bit 20: SGL Data Block descriptor with the Offset address type (in-capsule data). */
    public static final int SGLS_OFFSET_SUPPORTED = 1 << 20;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /**
     * From CAP and the raw Identify Controller data ({@code identify}, 4096 bytes) and its decoded {@code info}.
     *
     * @throws NvmfHostException when CAP.CSS does not include the NVM command set
     */
    public static TargetLimits of(long cap, MemorySegment identify, IdentifyControllerDescriptor.Info info) {
        if ((cap & 1L << 37) == 0) {
            throw new NvmfHostException("controller does not support the NVM command set: CAP=0x" + Long.toHexString(cap));
        }
        int mqes = (int) (cap & 0xFFFF) + 1;
        int maxCmd = Short.toUnsignedInt(identify.get(U16, IdentifyControllerDescriptor.MAXCMD));
        int maxEntries = maxCmd == 0 ? mqes : Math.min(mqes, maxCmd + 1);
        int sgls = identify.get(U32, IdentifyControllerDescriptor.SGLS);
        int icdoff = Short.toUnsignedInt(identify.get(U16, IdentifyControllerDescriptor.ICDOFF));
        long ioccsz = Integer.toUnsignedLong(identify.get(U32, IdentifyControllerDescriptor.IOCCSZ));
        int inCapsule = (int) Math.max(0, Math.min(1 << 20, ioccsz * 16 - SqeDescriptor.LENGTH));
        if (inCapsule > 0 && (sgls & SGLS_OFFSET_SUPPORTED) == 0) {
            LOG.info("controller states IOCCSZ={} but not SGLS bit 20 (offset SGL): no in-capsule data", ioccsz);
            inCapsule = 0;
        } else if (inCapsule > 0 && icdoff != 0) {
            LOG.warn("controller states ICDOFF={} (in-capsule data not right after the SQE): no in-capsule data",
                    icdoff);
            inCapsule = 0;
        }
        return new TargetLimits(maxEntries, info.mdtsBytes(), inCapsule);
    }

    /** How long CSTS.RDY may take after CC.EN=1: CAP.TO x 500 ms, {@code fallbackNs} when TO is 0. */
    public static long readyTimeoutNs(long cap, long fallbackNs) {
        int to = (int) (cap >>> 24) & 0xFF;
        return to == 0 ? fallbackNs : TimeUnit.MILLISECONDS.toNanos(500L * to);
    }
}
