package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.verbs.Providers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The RDMA WRITE of a read's data on a device that transmits unsignaled payloads after later completions (siw:
 * {@link io.rdmablock.rdma.verbs.DeviceContext#transmitsUnsignaledPayloadLate}). siw sends such a payload of 4 KiB or
 * more zero-copy and completes the response's SEND when it is handed to TCP, so the target, which reuses the request's
 * buffer at that completion, sent the next read's data under this read's response (the Linux host's fio verify on
 * siw: "bad header offset"). There the WRITE must be signaled (siw copies a signaled payload); elsewhere it stays
 * unsignaled, the SEND's completion retiring it (one completion per read, not two).
 */
class LatePayloadTest {
    private static final int LBA = 512;
    private static final int BLOCKS = 8; // 4 KiB: siw's zero-copy threshold

    @TempDir
    Path dir;

    @Test
    void shouldSignalTheWriteOfReadDataWhereTheDeviceTransmitsUnsignaledPayloadLate() {
        List<LatePayloadProvider.PostedWrite> writes = readBack(true);
        assertFalse(writes.isEmpty(), "the target posted no RDMA WRITE");
        for (LatePayloadProvider.PostedWrite w : writes) {
            assertTrue(w.signaled(), "unsignaled RDMA WRITE of " + w.bytes() + " bytes on a late-transmitting device");
        }
    }

    @Test
    void shouldLeaveTheWriteUnsignaledWhereTheSendsCompletionRetiresIt() {
        List<LatePayloadProvider.PostedWrite> writes = readBack(false);
        assertFalse(writes.isEmpty(), "the target posted no RDMA WRITE");
        for (LatePayloadProvider.PostedWrite w : writes) {
            assertFalse(w.signaled(), "signaled RDMA WRITE of " + w.bytes() + " bytes: a completion per read for nothing");
        }
    }

    /** Writes 16 distinct 4 KiB blocks and reads each back (checked); returns the target's RDMA WRITEs. */
    private List<LatePayloadProvider.PostedWrite> readBack(boolean late) {
        LatePayloadProvider provider = new LatePayloadProvider(Providers.select("soft"), late);
        try (TargetFixture f = new TargetFixture(dir.resolve(late ? "late" : "plain"), provider)) {
            RawHost admin = f.admin(0);
            RawHost io = f.io(TargetFixture.cntlid(admin), 1, 32);
            try {
                for (int i = 0; i < 16; i++) {
                    MemorySegment d = io.data().asSlice(0, BLOCKS * LBA);
                    fill(d, i);
                    RawHost.Cqe c = io.exec(io.rw(0, Opcodes.IO_WRITE, 1, (long) i * BLOCKS, BLOCKS, false, 0,
                            BLOCKS * LBA));
                    assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
                }
                provider.writes.clear(); // the target's WRITEs from here on are read data only
                for (int i = 0; i < 16; i++) {
                    MemorySegment r = io.data().asSlice(8192, BLOCKS * LBA);
                    r.fill((byte) 0x55);
                    RawHost.Cqe c = io.exec(io.rw(0, Opcodes.IO_READ, 2, (long) i * BLOCKS, BLOCKS, false, 8192,
                            BLOCKS * LBA));
                    assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
                    MemorySegment want = MemorySegment.ofArray(new byte[BLOCKS * LBA]);
                    fill(want, i);
                    assertEquals(-1, r.mismatch(want), "data of block " + i);
                }
                return List.copyOf(provider.writes);
            } finally {
                TargetFixture.close(io, admin);
            }
        }
    }

    private static void fill(MemorySegment s, long seed) {
        for (long i = 0; i < s.byteSize(); i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, seed * 0x9E3779B97F4A7C15L + i);
        }
    }
}
