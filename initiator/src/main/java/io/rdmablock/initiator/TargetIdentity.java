package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.AdminCommands;
import io.rdmablock.nvmf.host.NvmfStatusException;
import io.rdmablock.nvmf.host.QueueConnection;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor;
import io.rdmablock.rdma.fabric.Opcodes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * What a device was opened on, as any NVMe-oF target describes it, and the check that a reconnect reaches the same
 * thing: the namespace (nsid) chosen on the first association, the Identify Controller serial number, and the
 * Identify Namespace NGUID and LBA data size. No rdmablock-only field is relied on (the storage node puts its volume
 * id into the serial, Linux nvmet a random hex string, SPDK a configured one). Controller thread only.
 *
 * <p>Namespace choice (first association): the {@code nsid} option when set; otherwise from the Active Namespace ID
 * list (Identify CNS 02h, NVMe Base 2.0 section 5.17.2.2): nsid 1 when it is active, else the first active one
 * (Linux nvmet advertises NN = 1024 and any configured nsid). A target that does not answer CNS 02h gets nsid 1.
 *
 * <p>Identify Namespace (NVM Command Set 1.0 section 4.1.5.1, Figure 97): the LBA format is the one FLBAS points at
 * (bits 3:0, with bits 6:5 as the upper index bits when NLBAF &gt; 16); its LBADS (bits 23:16) gives the data size,
 * which must be 512 B .. 64 KiB, and its MS (bits 15:0) must be 0: metadata is not supported. An all-zero structure
 * (Linux nvmet's answer for an inactive nsid, {@code nvmet_execute_identify_ns}) means the namespace is not active.
 */
final class TargetIdentity {
    private static final Logger LOG = LoggerFactory.getLogger(TargetIdentity.class);
    /** NGUID: Identify Namespace bytes 104..119. */
    static final int NGUID = 104;
    static final int NGUID_LENGTH = 16;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int requestedNsid;
    private int nsid;
    private String serial;
    private byte[] nguid;

    /** @param requestedNsid the {@code nsid} option; 0 = choose from the active namespace list */
    TargetIdentity(int requestedNsid) {
        this.requestedNsid = requestedNsid;
    }

    /** The namespace the device reads and writes; 0 before the first association chose it. */
    int nsid() {
        return nsid;
    }

    /**
     * Identify Controller on {@code a}; on a reconnect checks the serial number is the first association's.
     *
     * @throws IdentityChangedException when the serial differs (another controller answers under the subnqn)
     */
    IdentifyControllerDescriptor.Info identifyController(QueueConnection a, String subnqn, long timeoutNs) {
        IdentifyControllerDescriptor.Info info = AdminCommands.identifyController(a, timeoutNs);
        if (serial == null) {
            serial = info.serial();
        } else if (!serial.equals(info.serial())) {
            throw new IdentityChangedException("controller serial changed from '" + serial + "' to '"
                    + info.serial() + "': another volume answers under " + subnqn + " (deleted and re-created?)");
        }
        return info;
    }

    /** Chooses the nsid on the first association (see the class comment); later calls keep it. */
    void chooseNamespace(QueueConnection a, long timeoutNs) {
        if (nsid != 0) {
            return;
        }
        if (requestedNsid != 0) {
            nsid = requestedNsid;
            return;
        }
        int[] active;
        try {
            AdminCommands.identify(a, 0, Opcodes.CNS_ACTIVE_NAMESPACE_LIST, timeoutNs);
            active = activeNamespaces(a.memory().identify());
        } catch (NvmfStatusException e) {
            LOG.debug("active namespace list not available ({}); using nsid 1", e.getMessage());
            nsid = 1;
            return;
        }
        if (active.length == 0) {
            throw new BlockIoException("the subsystem has no active namespace (Identify CNS 02h list is empty)");
        }
        nsid = Arrays.stream(active).anyMatch(n -> n == 1) ? 1 : active[0];
        if (active.length > 1) {
            LOG.info("the subsystem has {} active namespaces {}; using nsid {} (choose with the nsid option)",
                    active.length, Arrays.toString(active), nsid);
        }
    }

    /**
     * Identify Namespace of {@link #nsid()}; on a reconnect checks NGUID and LBA size are the first association's.
     *
     * @param knownLbaSize the LBA size the device uses, 0 before the first association
     * @throws IdentityChangedException when NGUID or LBA size differ
     * @throws BlockIoException           when the namespace is not active or uses metadata or an unusable format
     */
    IdentifyNamespaceDescriptor.Info identifyNamespace(QueueConnection a, int knownLbaSize, long timeoutNs) {
        AdminCommands.identify(a, nsid, Opcodes.CNS_NAMESPACE, timeoutNs);
        MemorySegment data = a.memory().identify();
        IdentifyNamespaceDescriptor.Info info = decodeNamespace(nsid, data);
        byte[] id = data.asSlice(NGUID, NGUID_LENGTH).toArray(ValueLayout.JAVA_BYTE);
        if (nguid == null) {
            nguid = id;
        } else if (!Arrays.equals(nguid, id)) {
            throw new IdentityChangedException("namespace NGUID of nsid " + nsid + " changed from "
                    + HexFormat.of().formatHex(nguid) + " to " + HexFormat.of().formatHex(id)
                    + ": another namespace answers (deleted and re-created?)");
        }
        if (knownLbaSize != 0 && info.lbaSize() != knownLbaSize) {
            throw new IdentityChangedException("namespace LBA size changed from " + knownLbaSize + " to "
                    + info.lbaSize() + " bytes: held I/O addresses blocks of the old size");
        }
        return info;
    }

    /**
     * Decodes Identify Namespace honouring FLBAS (see the class comment).
     *
     * @throws BlockIoException when the structure is all zero (inactive namespace), FLBAS points beyond NLBAF, the
     *                          format has metadata (MS &gt; 0) or its LBADS is outside 9 .. 16
     */
    static IdentifyNamespaceDescriptor.Info decodeNamespace(int nsid, MemorySegment data) {
        int nlbaf = u8(data, IdentifyNamespaceDescriptor.NLBAF); // 0-based
        int flbas = u8(data, IdentifyNamespaceDescriptor.FLBAS);
        int index = (flbas & 0xF) | (nlbaf >= 16 ? ((flbas >>> 5) & 0x3) << 4 : 0);
        long nsze = data.get(U64, IdentifyNamespaceDescriptor.NSZE);
        int lbaf = data.get(U32, IdentifyNamespaceDescriptor.LBAF0 + 4L * Math.min(index, 63));
        if (nsze == 0 && lbaf == 0) {
            throw new BlockIoException("namespace nsid " + nsid + " is not active (Identify Namespace is all zero)");
        }
        if (index > nlbaf) {
            throw new BlockIoException("namespace nsid " + nsid + ": FLBAS=0x" + Integer.toHexString(flbas)
                    + " selects LBA format " + index + ", but NLBAF=" + nlbaf + " (0-based)");
        }
        int metadataBytes = lbaf & 0xFFFF;
        int lbads = (lbaf >>> 16) & 0xFF;
        if (metadataBytes != 0) {
            throw new BlockIoException("namespace nsid " + nsid + " is formatted with metadata: LBA format " + index
                    + " has MS=" + metadataBytes + " bytes per block; rdmablock supports metadata size 0 only "
                    + "(reformat the namespace or disable protection information on the target)");
        }
        if (lbads < 9 || lbads > 16) {
            throw new BlockIoException("namespace nsid " + nsid + ": LBA format " + index + " has LBADS=" + lbads
                    + ", supported 9 .. 16 (512 B .. 64 KiB)");
        }
        IdentifyNamespaceDescriptor.Info basic = IdentifyNamespaceDescriptor.decode(data);
        return new IdentifyNamespaceDescriptor.Info(nsze, basic.usedBlocks(), 1 << lbads, basic.zeroesAfterTrim());
    }

    /** The Active Namespace ID list: ascending nsids, ended by the first 0 (at most 1024). */
    static int[] activeNamespaces(MemorySegment data) {
        int n = 0;
        while (n < 1024 && data.get(U32, 4L * n) != 0) {
            n++;
        }
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = data.get(U32, 4L * i);
        }
        return ids;
    }

    private static int u8(MemorySegment data, int offset) {
        return data.get(ValueLayout.JAVA_BYTE, offset) & 0xFF;
    }
}
