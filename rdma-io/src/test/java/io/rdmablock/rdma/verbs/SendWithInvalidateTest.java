package io.rdmablock.rdma.verbs;

import static io.rdmablock.rdma.verbs.VerbsTestSupport.assertSameBytes;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.fill;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.rdma;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.recv;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmablock.rdma.verbs.QueuePair.PostException;
import io.rdmablock.rdma.verbs.VerbsTestSupport.Connection;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * SEND with Invalidate ({@link WrOpcode#SEND_WITH_INV}): refused clearly where the device lacks it, delivered with
 * the invalidated rkey in the receiver's completion where it has it.
 */
class SendWithInvalidateTest {
    private static final String PROVIDERS = "io.rdmablock.rdma.verbs.VerbsTestSupport#providers";

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRefuseSendWithInvalidateWhereTheDeviceDoesNotSupportIt(String provider) {
        try (Connection c = Connection.open(provider)) {
            assumeFalse(c.client.id.device().supportsSendWithInvalidate(),
                    "device " + c.client.id.device().name() + " supports SEND_WITH_INV");
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
            c.server.qp.postRecv(recv(1, dst, 0, 64));
            SendWr w = send(2, WrOpcode.SEND_WITH_INV, src, 0, 64);
            w.invalidateRkey = dst.rkey();
            PostException e = assertThrows(PostException.class, () -> c.client.qp.postSend(w));
            assertEquals(22, e.errno(), e.getMessage());
            assertTrue(e.getMessage().contains("SEND_WITH_INV"), e.getMessage());
            c.client.qp.postSend(send(3, WrOpcode.SEND, src, 0, 64)); // the QP is still usable
            assertEquals(3, c.client.next().wrId);
            WorkCompletion r = c.server.next();
            assertEquals(WcStatus.SUCCESS, r.status, r.toString());
            assertFalse(r.withInv, r.toString());
        }
    }

    /**
     * The receiver's RECV completion says WITH_INV and names the rkey; the memory is invalidated: a later RDMA WRITE
     * to it fails the connection. Runs on iWARP only: siw invalidates any MR of the receiving QP's PD
     * (siw_invalidate_stag), while IB/RoCE devices invalidate only fast-registration MRs (rxe_invalidate_mr refuses
     * any type but IB_MR_TYPE_MEM_REG), which this verbs API cannot create.
     */
    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldDeliverSendWithInvalidateAndReportTheInvalidatedRkey(String provider) {
        try (Connection c = Connection.open(provider)) {
            DeviceContext dev = c.client.id.device();
            assumeTrue(dev.supportsSendWithInvalidate(), "device " + dev.name()
                    + " has no SEND_WITH_INV (IBV_DEVICE_MEM_MGT_EXTENSIONS not set)");
            assumeTrue(VerbsTestSupport.iwarp(c), "device " + dev.name() + " (" + dev.transport() + ") invalidates "
                    + "only fast-registration MRs (rxe_invalidate_mr: IB_MR_TYPE_MEM_REG), which this API cannot "
                    + "create; a plain MR's rkey fails the receiver with REM_INV_REQ_ERR");
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
            MemoryRegion target = c.server.register(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            fill(src.segment(), 41);
            c.server.qp.postRecv(recv(1, dst, 0, 4096));
            SendWr w = send(2, WrOpcode.SEND_WITH_INV, src, 0, 100);
            w.invalidateRkey = target.rkey();
            c.client.qp.postSend(w);
            WorkCompletion s = c.client.next();
            assertEquals(WcStatus.SUCCESS, s.status, s.toString());
            assertEquals(WcOpcode.SEND, s.opcode);
            WorkCompletion r = c.server.next();
            assertEquals(WcStatus.SUCCESS, r.status, r.toString());
            assertEquals(WcOpcode.RECV, r.opcode);
            assertEquals(100, r.byteLen);
            assertTrue(r.withInv, r.toString());
            assertFalse(r.withImm, r.toString());
            assertEquals(target.rkey(), r.invalidatedRkey, r.toString());
            assertSameBytes(src.segment().asSlice(0, 100), dst.segment().asSlice(0, 100), "payload");
            c.client.qp.postSend(rdma(3, WrOpcode.RDMA_WRITE, src, 0, 64, target, 0));
            VerbsTestSupport.awaitConnectionFailed(c, "RDMA WRITE to the invalidated rkey");
        }
    }
}
