package io.rdmablock.node.target;

import io.rdmablock.node.target.VolumeIo;
import io.rdmablock.node.store.StoreFaults;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A write's payload is readable remotely where it landed on the target (docs/replication.md, "Wire": a secondary
 * RDMA READs a forwarded write's data from the primary's buffer): a peer queue pair in the device's protection
 * domain (here the target's own queue pair answering the host) serves an RDMA READ at {@link Request#dataAddress()}
 * with {@link Request#dataRkey()}, for a keyed-SGL payload (data region) and for in-capsule data (RECV region).
 */
class RemoteReadTest extends TargetTestBase {
    static final long X = 1L << 20;
    static final long STALL_NS = TimeUnit.MILLISECONDS.toNanos(1500);

    volatile long address;
    volatile int rkey;
    volatile int lengthBytes;

    /** The local handle, recording where each WRITE's data is (the store holds the write: see the stall). */
    final class Recording extends ForwardingVolumeIo {
        Recording(VolumeIo.Context c) {
            super(c);
        }

        @Override
        public int start(Request r, long nowNs) {
            if (r.opcode() == Opcodes.IO_WRITE) {
                rkey = r.dataRkey();
                lengthBytes = r.dataLengthBytes();
                address = r.dataAddress(); // last: the test waits for it
            }
            return local.start(r, nowNs);
        }
    }

    @BeforeEach
    void setUp() {
        f.target.subsystemOfVolume("vol1").setVolumeIoFactory(Recording::new);
        f.store.setFaults(StoreFaults.stall("vol1", X, STALL_NS, 2));
        connect(TargetFixture.HOSTNQN, 0);
    }

    private void awaitRecorded() throws InterruptedException {
        Await.until(() -> address != 0, Duration.ofNanos(RawHost.TIMEOUT_NS), "the WRITE reached the volume I/O");
    }

    /** While the write is held in the store: RDMA READ its payload from the target into host data at 64 KiB. */
    private void assertPayloadReadableRemotely(MemorySegment expected) {
        assertEquals(expected.byteSize(), lengthBytes, "dataLengthBytes");
        long at = 64 * 1024;
        io.data().asSlice(at, expected.byteSize()).fill((byte) 0);
        WcStatus s = io.rdmaRead(at, lengthBytes, address, rkey);
        assertEquals(WcStatus.SUCCESS, s, "RDMA READ at the request's dataAddress/dataRkey");
        assertEquals(-1, io.data().asSlice(at, expected.byteSize()).mismatch(expected), "the payload as written");
    }

    @Test
    void shouldLetAPeerRdmaReadAKeyedWritePayloadFromTheDataBuffer() throws Exception {
        for (int i = 0; i < 4096; i++) {
            io.data().set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 1));
        }
        MemorySegment expected = java.lang.foreign.Arena.ofAuto().allocate(4096).copyFrom(io.data().asSlice(0, 4096));
        io.rw(0, Opcodes.IO_WRITE, 1, X / LBA, 8, false, 0, 4096);
        io.post(0, 64);
        awaitRecorded();
        assertPayloadReadableRemotely(expected);
        assertNull(io.error());
        io.awaitAnswer(STALL_NS + RawHost.TIMEOUT_NS, 1, 0, "the held write completes");
    }

    @Test
    void shouldLetAPeerRdmaReadInCapsuleDataFromTheRecvSlot() throws Exception {
        MemorySegment c = io.command(0, Opcodes.IO_WRITE, 2, 1);
        SqeDescriptor.slba(c, X / LBA);
        SqeDescriptor.blockCount(c, 8, 0);
        SglDescriptor.inCapsule(SqeDescriptor.sgl1(c), 0, 8 * LBA);
        for (int i = 0; i < 8 * LBA; i++) {
            c.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 64 + i, (byte) (i * 13 + 5));
        }
        MemorySegment expected = java.lang.foreign.Arena.ofAuto().allocate(8 * LBA).copyFrom(c.asSlice(64, 8 * LBA));
        io.post(0, 64 + 8 * LBA);
        awaitRecorded();
        assertTrue(address % 4096 == 0, "in-capsule data is page aligned in the RECV slot");
        assertPayloadReadableRemotely(expected);
        RawHost.Cqe done = io.await(STALL_NS + RawHost.TIMEOUT_NS);
        assertEquals(0, done.status(), NvmeStatus.describe(done.status()));
    }
}
