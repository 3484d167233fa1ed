package io.rdmablock.initiator.local;

import io.rdmablock.initiator.BlockDevice;

/**
 * Opens a {@link BlockDevice} on a storage node (by volume name through the management REST API, or by address and
 * subsystem NQN). This is the glue to the NVMe-oF/RDMA initiator; it is kept in one place so the front-ends do not
 * depend on how the initiator is configured.
 */
final class RemoteDevices {

    private RemoteDevices() {
    }

    static BlockDevice open(DeviceOptions o, int ioQueues) {
        throw new UnsupportedOperationException("remote devices are not available in this build: the NVMe-oF initiator"
                + " has not landed yet (volume=" + o.volume() + ", address=" + o.address() + "); use --file PATH");
    }
}
