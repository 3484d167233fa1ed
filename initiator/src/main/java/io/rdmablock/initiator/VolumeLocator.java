package io.rdmablock.initiator;

import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.nvmf.host.FabricAddress;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;

import java.net.InetSocketAddress;

/**
 * Opens a volume by name: asks the management server ({@code GET /v1/volumes/{name}}) for the volume's subnqn and
 * copies. One copy (or a server without a copies list): {@link NvmeBlockDevice#open} on the node's fabric address.
 * Several: a {@link MultipathDevice} with a path to every copy's fabric address, I/O on the ANA Optimized one, and
 * failover (docs/failover.md).
 */
public final class VolumeLocator {
    private VolumeLocator() {
    }

    /**
     * @throws io.rdmablock.mgmt.client.MgmtException when the volume does not exist or the server refuses
     * @throws IllegalStateException                   when the volume has no fabric address yet (not placed)
     * @throws BlockIoException                        as {@link NvmeBlockDevice#open}; when the connection fails and
     *                                                 the volume is {@code unavailable} (its node down), the
     *                                                 message says so
     */
    public static BlockDevice open(MgmtClient mgmt, String volumeName, String hostnqn, DeviceOptions opts) {
        Volume v = mgmt.getVolume(volumeName);
        CopySource.Copies copies = MgmtCopySource.copiesOf(v);
        if (copies.copies().size() > 1 && v.subnqn() != null) {
            try {
                return MultipathDevice.open(volumeName, copies, v.subnqn(), hostnqn, opts,
                        new MgmtCopySource(mgmt, volumeName));
            } catch (BlockIoException e) {
                if (v.state() != VolumeState.UNAVAILABLE || e instanceof NvmeStatusException) {
                    throw e;
                }
                throw new BlockIoException("volume '" + volumeName + "' is unavailable: the management server "
                        + "reports its primary node " + v.nodeId() + " down (no heartbeat); " + e.getMessage(), e);
            }
        }
        if (v.fabricAddress() == null || v.fabricAddress().isBlank() || v.subnqn() == null) {
            throw new IllegalStateException("volume '" + volumeName + "' has no fabric address yet (state "
                    + v.state() + ")");
        }
        InetSocketAddress address = parseAddress(v.fabricAddress());
        try {
            return NvmeBlockDevice.open(address, v.subnqn(), hostnqn, opts);
        } catch (BlockIoException e) {
            if (v.state() != VolumeState.UNAVAILABLE || e instanceof NvmeStatusException) {
                throw e;
            }
            throw new BlockIoException("volume '" + volumeName + "' is unavailable: the management server reports "
                    + "its node " + v.nodeId() + " down (no heartbeat); " + e.getMessage(), e);
        }
    }

    /**
     * Parses {@code host:port} or {@code [v6addr]:port} ({@link FabricAddress#parse}).
     *
     * @throws IllegalArgumentException naming the value when it has no port or the port is out of 1 .. 65535
     */
    public static InetSocketAddress parseAddress(String hostPort) {
        return FabricAddress.parse(hostPort);
    }
}
