package io.rdmablock.initiator;

import io.rdmablock.rdma.fabric.CmPrivateData;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which failed reconnects end the device at once ({@link Controller#isPermanent}) and which are retried. */
class ReconnectPolicyTest {
    private static CmException rejected(byte[] data) {
        return new CmException("rdma_connect: rejected", CmEventType.REJECTED, data);
    }

    @Test
    void shouldRetryACmRejectWithoutNvmeRdmaRejectData() {
        // rxe/IB: a connect to a port nobody listens on (node restarting) is a REJ with 148 zero bytes
        assertFalse(ReconnectPolicy.isPermanent(rejected(new byte[148])), "zero-filled IB CM REJ data");
        assertFalse(ReconnectPolicy.isPermanent(rejected(null)), "no private data");
        assertFalse(ReconnectPolicy.isPermanent(rejected(new CmPrivateData.Reject(0, CmPrivateData.REJECT_NO_RESOURCES)
                .encode())), "no resources");
        assertFalse(ReconnectPolicy.isPermanent(new CmException("timed out", null, null)), "timeout");
        assertFalse(ReconnectPolicy.isPermanent(new BlockIoException("x", rejected(new byte[148]))), "wrapped");
    }

    @Test
    void shouldGiveUpOnAnNvmeRdmaRejectOrADnrStatus() {
        assertTrue(ReconnectPolicy.isPermanent(rejected(new CmPrivateData.Reject(0, CmPrivateData.REJECT_INVALID_QID)
                .encode())), "invalid qid");
        assertTrue(ReconnectPolicy.isPermanent(new NvmeStatusException("Connect failed",
                NvmeStatus.SCT_COMMAND_SPECIFIC, NvmeStatus.SC_CONNECT_INVALID_HOST, true)));
        assertFalse(ReconnectPolicy.isPermanent(new NvmeStatusException("Connect failed",
                NvmeStatus.SCT_COMMAND_SPECIFIC, NvmeStatus.SC_CONNECT_CONTROLLER_BUSY, false)));
    }
}
