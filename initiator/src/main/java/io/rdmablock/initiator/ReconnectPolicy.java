package io.rdmablock.initiator;

import io.rdmablock.rdma.fabric.CmPrivateData;
import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmException;

/** Which failed reconnect attempts the {@link Controller} retries and which end the device at once. */
final class ReconnectPolicy {
    private ReconnectPolicy() {
    }

    /**
     * True when a failed reconnect cannot succeed on retry: the Connect (or Identify) answered an NVMe status with
     * DNR=1 (e.g. unknown subnqn after the volume was deleted, invalid host), or the CM connect was rejected with
     * NVMe/RDMA reject data other than "no resources" (NVMe/RDMA Transport 1.0 section 3.2, Figure 7). Timeouts,
     * refused connections, rejects without NVMe/RDMA data and DNR=0 statuses are transient.
     */
    static boolean isPermanent(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IdentityChangedException) {
                return true;
            }
            if (t instanceof NvmeStatusException s) {
                return s.dnr();
            }
            if (t instanceof CmException cm) {
                if (cm.event() != CmEventType.REJECTED) {
                    return false;
                }
                CmPrivateData.Reject rej = CmPrivateData.Reject.decode(cm.privateData());
                return rej != null && rej.sts() != CmPrivateData.REJECT_NO_RESOURCES;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }
}
