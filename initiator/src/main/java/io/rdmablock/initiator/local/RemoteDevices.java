package io.rdmablock.initiator.local;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.MgmtClient;
import java.net.URI;

/**
 * Opens a {@link BlockDevice} on a storage node: by volume name through the management REST API
 * ({@link VolumeLocator}), or by address and subsystem NQN ({@link NvmeBlockDevice#open}). Kept in one place so the
 * front-ends do not depend on how the initiator is configured.
 */
final class RemoteDevices {

    private RemoteDevices() {
    }

    static BlockDevice open(DeviceOptions o, int ioQueues) {
        io.rdmablock.initiator.DeviceOptions opts = io.rdmablock.initiator.DeviceOptions.defaults()
                .ioQueues(ioQueues).providerMode(o.provider());
        if (o.address() != null) {
            return NvmeBlockDevice.open(VolumeLocator.parseAddress(o.address()), o.subnqn(), o.hostnqn(), opts);
        }
        String url = o.mgmtUrl() == null || o.mgmtUrl().isBlank() ? "http://127.0.0.1:8080" : o.mgmtUrl();
        String token = o.token() == null || o.token().isBlank() ? null : o.token();
        return VolumeLocator.open(new MgmtClient(URI.create(url), token), o.volume(), o.hostnqn(), opts);
    }
}
