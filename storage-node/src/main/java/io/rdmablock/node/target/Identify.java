package io.rdmablock.node.target;

import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor;
import io.rdmablock.rdma.fabric.NamespaceIdDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The Identify command (NVMe Base 2.0 section 5.17) on the admin queue; every answer is 4096 bytes, of which
 * min(SGL length, 4096) are written. CNS values, for an I/O controller:
 * <ul>
 * <li>00h Identify Namespace (nsid 1; else Invalid Namespace or Format), NMIC shared (bit 0), ANAGRPID 1 (bytes
 *     92..95 of the NVMe 1.4 Identify Namespace data structure), NGUID and EUI64;</li>
 * <li>01h Identify Controller (CNTRLTYPE 1, CMIC multi-controller and ANA reporting (bits 1, 3), OAES namespace
 *     attribute and ANA change notices (bits 8, 11), the ANA fields of NVMe 1.4 Figure 247: ANATT byte 342
 *     ({@value #ANATT_SECONDS} s), ANACAP 343 (optimized, inaccessible, change; ANAGRPID constant and non-zero),
 *     ANAGRPMAX 344..347 = NANAGRPID 348..351 = 1, MNAN 540..543 = 1 (Linux before 5.14 needs MNAN for the ANA
 *     log size); no LPA bit exists for log 0Ch: a host knows it from CMIC bit 3);</li>
 * <li>02h active namespace list ({@code [1]} when cdw1 nsid &lt; 1, else empty);</li>
 * <li>03h Namespace Identification Descriptor list (nsid 1): EUI64, NGUID, UUID, CSI 0 (see
 *     {@link NamespaceIds#of});</li>
 * <li>06h I/O Command Set specific Identify Controller, CSI 0 (cdw11 bits 31:24): all zeros (no NVM-specific limits;
 *     Linux {@code nvme_init_non_mdts_limits} then keeps its defaults); another CSI: Invalid Field.</li>
 * </ul>
 * A discovery controller answers CNS 01h only (CNTRLTYPE 2, NN 0), like nvmet; other CNS: Invalid Field in Command.
 */
final class Identify {
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Identify Controller CMIC bit 3: the controller reports Asymmetric Namespace Access (NVMe 1.4 Figure 247). */
    static final int CMIC_ANA = 1 << 3;
    /** Identify Controller byte 342: ANA Transition Time, seconds a host waits in Change before it gives up. */
    static final int ANATT = 342;
    /** Identify Controller byte 343: ANA Capabilities. */
    static final int ANACAP = 343;
    /** Identify Controller bytes 344..347: largest ANAGRPID. */
    static final int ANAGRPMAX = 344;
    /** Identify Controller bytes 348..351: number of ANA group ids. */
    static final int NANAGRPID = 348;
    /** Identify Controller bytes 540..543: maximum number of allowed namespaces. */
    static final int MNAN = 540;
    /** Identify Namespace bytes 92..95: the namespace's ANA group. */
    static final int NS_ANAGRPID = 92;
    /**
     * ANATT: a promotion takes lease + sweep + activation (~3 s with the defaults of docs/failover.md); 10 s leaves
     * room on a loaded box before Linux's ANATT timer resets the controller.
     */
    static final int ANATT_SECONDS = 10;
    /**
     * ANACAP: bit 0 Optimized, bit 2 Inaccessible, bit 4 Change states reported; bit 6 ANAGRPID does not change
     * while the namespace is attached; bit 7 non-zero ANAGRPID supported.
     */
    static final int ANACAP_VALUE = 1 | 1 << 2 | 1 << 4 | 1 << 6 | 1 << 7;

    private Identify() {
    }

    /** Fills {@code r.dataBuffer} ({@link Outcome#COMPLETE}), or rejects. Admin poller. */
    static Outcome execute(Request r, FabricQueue q, TargetController c) {
        MemorySegment sqe = r.sqe;
        int cns = SqeDescriptor.cdw(sqe, 10) & 0xFF;
        int nsid = SqeDescriptor.nsid(sqe);
        MemorySegment data = r.dataBuffer;
        Subsystem s = c.subsystem;
        TargetOptions options = q.options;
        if (s.isDiscovery() && cns != Opcodes.CNS_CONTROLLER) {
            return q.reject(r, Commands.INVALID_FIELD, "cns", cns, "supported=1 (discovery controller)");
        }
        switch (cns) {
            case Opcodes.CNS_CONTROLLER -> controller(data, c, options);
            case Opcodes.CNS_NAMESPACE -> {
                if (nsid != Subsystem.NSID) {
                    return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_INVALID_NAMESPACE),
                            "nsid", nsid, "min=1, max=1");
                }
                StoreVolume v = s.volume();
                IdentifyNamespaceDescriptor.encode(data, new IdentifyNamespaceDescriptor.Info(v.blockCount(),
                        v.liveBytes() / v.lbaSizeBytes(), v.lbaSizeBytes(), q.target.zeroesAfterTrim()));
                NamespaceIdDescriptor.Ids ids = s.namespaceIds();
                IdentifyNamespaceDescriptor.identifiers(data, IdentifyNamespaceDescriptor.NMIC_SHARED, ids.nguid(),
                        ids.eui64());
                data.set(U32, NS_ANAGRPID, AnaLogDescriptor.ANAGRPID);
            }
            case Opcodes.CNS_ACTIVE_NAMESPACE_LIST -> {
                data.asSlice(0, Opcodes.IDENTIFY_DATA_LENGTH).fill((byte) 0);
                if (Integer.compareUnsigned(nsid, Subsystem.NSID) < 0) {
                    data.set(U32, 0, Subsystem.NSID);
                }
            }
            case Opcodes.CNS_NAMESPACE_ID_DESCRIPTORS -> {
                if (nsid != Subsystem.NSID) {
                    return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_INVALID_NAMESPACE),
                            "nsid", nsid, "min=1, max=1");
                }
                NamespaceIdDescriptor.encode(data, s.namespaceIds());
            }
            case Opcodes.CNS_CS_CONTROLLER -> {
                int csi = SqeDescriptor.cdw(sqe, 11) >>> 24;
                if (csi != NamespaceIdDescriptor.CSI_NVM) {
                    return q.reject(r, Commands.INVALID_FIELD, "csi", csi, "supported=0 (NVM)");
                }
                data.asSlice(0, Opcodes.IDENTIFY_DATA_LENGTH).fill((byte) 0);
            }
            default -> {
                return q.reject(r, Commands.INVALID_FIELD, "cns", cns, "supported=0,1,2,3,6");
            }
        }
        return Outcome.COMPLETE;
    }

    /** Identify Controller of an I/O or discovery controller (field values: docs/wire-protocol.md section 6.1). */
    private static void controller(MemorySegment data, TargetController c, TargetOptions options) {
        Subsystem s = c.subsystem;
        boolean discovery = s.isDiscovery();
        String serial = discovery ? "discovery" : s.volume().id();
        serial = serial.length() > 20 ? serial.substring(0, 20) : serial;
        IdentifyControllerDescriptor.encode(data, new IdentifyControllerDescriptor.Info(serial, "rdmablock", "0.1",
                c.cntlid, options.mdtsBytes(), options.maxQueueEntries(), discovery ? 0 : 1, !discovery,
                s.subnqn(), options.inCapsuleDataBytes()));
        if (discovery) {
            data.set(ValueLayout.JAVA_SHORT_UNALIGNED, IdentifyControllerDescriptor.ONCS, (short) 0);
            IdentifyControllerDescriptor.controllerModel(data, 0, 0, IdentifyControllerDescriptor.CNTRLTYPE_DISCOVERY,
                    TargetController.MAX_HELD_AER - 1, IdentifyControllerDescriptor.LPA_EXTENDED_DATA);
        } else {
            IdentifyControllerDescriptor.controllerModel(data, IdentifyControllerDescriptor.CMIC_MULTI_CONTROLLER
                            | CMIC_ANA, c.supportedAsyncEvents(), IdentifyControllerDescriptor.CNTRLTYPE_IO,
                    TargetController.MAX_HELD_AER - 1, IdentifyControllerDescriptor.LPA_SMART_PER_NAMESPACE
                            | IdentifyControllerDescriptor.LPA_EXTENDED_DATA);
            data.set(ValueLayout.JAVA_BYTE, ANATT, (byte) ANATT_SECONDS);
            data.set(ValueLayout.JAVA_BYTE, ANACAP, (byte) ANACAP_VALUE);
            data.set(U32, ANAGRPMAX, AnaLogDescriptor.ANAGRPID);
            data.set(U32, NANAGRPID, 1);
            data.set(U32, MNAN, 1);
        }
    }
}
