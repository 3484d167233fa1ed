package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.DsmRangeDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Raw-capsule fuzzing of the target, bounded to {@link #MAX_CAPSULES} capsules or {@link #MAX_NS}: random and
 * mutated capsules on an I/O queue and on the admin queue, one at a time. For each: a response with the capsule's
 * cid, or a teardown of only that queue (a transport error at the host), after which the host reconnects. After
 * every capsule the guard regions around the host buffer (registered with remote access) must be untouched; keyed
 * SGLs carrying the host's rkey always stay inside the buffer. At the end a fresh queue does a verified write/read.
 */
class TargetFuzzTest {
    static final int MAX_CAPSULES = Integer.getInteger("rdmablock.fuzz.capsules", 20_000);
    static final long MAX_NS = Long.getLong("rdmablock.fuzz.seconds", 20) * 1_000_000_000L;
    static final long SEED = Long.getLong("rdmablock.fuzz.seed", 0x5EEDL);
    static final int LBA = 512;
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @TempDir
    Path dir;

    TargetFixture f;
    RawHost admin;
    RawHost io;
    int cntlid;
    int ioQid = 1;
    int responses;
    int teardowns;
    int errorStatuses;

    @Test
    void shouldSurviveRandomAndMutatedCapsules() {
        f = new TargetFixture(dir, TargetOptions.defaults(), 8L << 20, LBA, java.util.Set.of("*"));
        SplittableRandom rnd = new SplittableRandom(SEED);
        long deadline = System.nanoTime() + MAX_NS;
        int sent = 0;
        try {
            connectAll();
            while (sent < MAX_CAPSULES && System.nanoTime() < deadline) {
                boolean onAdmin = rnd.nextInt(8) == 0;
                RawHost h = onAdmin ? admin : io;
                int slot = 0;
                MemorySegment c = h.capsule(slot);
                int cid = rnd.nextInt(0x10000);
                int length = rnd.nextInt(4) == 0 ? randomCapsule(rnd, c, h) : mutatedCapsule(rnd, c, h, onAdmin);
                SqeDescriptor.cid(c, cid);
                if (onAdmin && SqeDescriptor.opcode(c) == Opcodes.ADMIN_ASYNC_EVENT_REQUEST) {
                    SqeDescriptor.opcode(c, Opcodes.ADMIN_KEEP_ALIVE); // an AER is held by design, not answered
                }
                sanitizeSgl(c, h);
                h.post(slot, length);
                sent++;
                RawHost.Cqe r = h.await(5_000_000_000L);
                assertNotNull(r, "no response and no teardown within 5 s for capsule " + sent + " (opcode 0x"
                        + Integer.toHexString(SqeDescriptor.opcode(c)) + ", length " + length + ")");
                assertTrue(h.guardsIntact(), "host memory outside the SGL was written (capsule " + sent + ")");
                if (r.error() != null) {
                    teardowns++;
                    if (length >= 64 && teardowns > sent / 2 + 50) {
                        fail("too many teardowns: " + teardowns + " of " + sent);
                    }
                    reconnect(onAdmin);
                } else {
                    responses++;
                    assertEquals(cid, r.cid(), "response cid");
                    if (r.status() != 0) {
                        errorStatuses++;
                    }
                }
            }
            System.out.printf("fuzz: capsules=%d responses=%d (error statuses %d) teardowns=%d seed=%d%n", sent,
                    responses, errorStatuses, teardowns, SEED);
            // a floor only: a time-bounded run on a loaded machine gets through few capsules
            assertTrue(sent >= Math.min(MAX_CAPSULES, 100), "fuzzed too few capsules: " + sent);
            verifyStillServing();
        } finally {
            closeHosts();
            f.close();
        }
    }

    /** Fully random SQE bytes and length (sometimes below 64 bytes), random keys. */
    private int randomCapsule(SplittableRandom rnd, MemorySegment c, RawHost h) {
        int len = rnd.nextInt(10) == 0 ? rnd.nextInt(1, 64) : 64 + (rnd.nextBoolean() ? 0 : rnd.nextInt(8193));
        for (int i = 0; i < len; i += 8) {
            c.set(U64, i, rnd.nextLong());
        }
        return len;
    }

    /** A valid command of a random kind with 1-4 random byte or field mutations. */
    private int mutatedCapsule(SplittableRandom rnd, MemorySegment c, RawHost h, boolean onAdmin) {
        int len = 64;
        long capacity = f.volume.blockCount();
        int kind = rnd.nextInt(onAdmin ? 4 : 7);
        if (onAdmin) {
            switch (kind) {
                case 0 -> {
                    h.command(0, Opcodes.ADMIN_IDENTIFY, 0, rnd.nextInt(3));
                    SqeDescriptor.cdw(c, 10, rnd.nextInt(3));
                    SglDescriptor.keyed(SqeDescriptor.sgl1(c), h.dataAddress(0), 4096, h.rkey());
                }
                case 1 -> h.keepAlive(0, 0);
                case 2 -> {
                    h.command(0, Opcodes.FABRICS, 0, 0);
                    SqeDescriptor.fctype(c, rnd.nextBoolean() ? Opcodes.FCTYPE_PROPERTY_GET : Opcodes.FCTYPE_PROPERTY_SET);
                    SqeDescriptor.cdw(c, 11, new int[]{0, 8, 0x14, 0x1C}[rnd.nextInt(4)]);
                }
                default -> {
                    h.command(0, rnd.nextBoolean() ? Opcodes.ADMIN_GET_FEATURES : Opcodes.ADMIN_SET_FEATURES, 0, 0);
                    SqeDescriptor.cdw(c, 10, rnd.nextInt(16));
                }
            }
        } else {
            int blocks = 1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 300);
            long slba = rnd.nextInt(4) == 0 ? capacity - rnd.nextInt(4) : rnd.nextLong(Math.max(1, capacity - 300));
            switch (kind) {
                case 0, 1 -> h.rw(0, Opcodes.IO_READ, 0, slba, blocks, false, rnd.nextInt(64) * 4096L,
                        blocks * LBA);
                case 2 -> h.rw(0, Opcodes.IO_WRITE, 0, slba, blocks, rnd.nextBoolean(), rnd.nextInt(64) * 4096L,
                        blocks * LBA);
                case 3 -> {
                    int b = 1 + rnd.nextInt(16);
                    h.command(0, Opcodes.IO_WRITE, 0, 1);
                    SqeDescriptor.slba(c, slba);
                    SqeDescriptor.blockCount(c, b, 0);
                    SglDescriptor.inCapsule(SqeDescriptor.sgl1(c), 0, b * LBA);
                    len = 64 + b * LBA;
                }
                case 4 -> h.command(0, Opcodes.IO_FLUSH, 0, 1);
                case 5 -> {
                    h.command(0, Opcodes.IO_WRITE_ZEROES, 0, 1);
                    SqeDescriptor.slba(c, slba);
                    SqeDescriptor.blockCount(c, blocks, 0);
                }
                default -> {
                    int nr = rnd.nextInt(4);
                    h.command(0, Opcodes.IO_DATASET_MANAGEMENT, 0, 1);
                    SqeDescriptor.cdw(c, 10, nr);
                    SqeDescriptor.cdw(c, 11, SqeDescriptor.DSM_CDW11_AD);
                    for (int i = 0; i <= nr; i++) {
                        DsmRangeDescriptor.set(c.asSlice(64), i, rnd.nextLong(capacity), rnd.nextInt(64));
                    }
                    SglDescriptor.inCapsule(SqeDescriptor.sgl1(c), 0, (nr + 1) * 16);
                    len = 64 + (nr + 1) * 16;
                }
            }
        }
        int mutations = 1 + rnd.nextInt(4);
        for (int m = 0; m < mutations; m++) {
            switch (rnd.nextInt(6)) {
                case 0 -> c.set(ValueLayout.JAVA_BYTE, rnd.nextInt(64), (byte) rnd.nextInt(256));
                case 1 -> SqeDescriptor.nsid(c, rnd.nextInt(3) - 1);
                case 2 -> SqeDescriptor.slba(c, rnd.nextBoolean() ? rnd.nextLong() : capacity - rnd.nextInt(3));
                case 3 -> SqeDescriptor.cdw(c, 12, rnd.nextInt());
                case 4 -> c.set(ValueLayout.JAVA_BYTE, SqeDescriptor.SGL1_OFFSET + SglDescriptor.ID_OFFSET,
                        (byte) new int[]{0x00, 0x01, 0x40, 0x4F, 0x20, 0x30, 0xFF}[rnd.nextInt(7)]);
                default -> len = rnd.nextInt(8) == 0 ? rnd.nextInt(1, 64) : len + rnd.nextInt(-16, 17);
            }
        }
        return Math.max(1, Math.min(len, RawHost.CAPSULE_BYTES));
    }

    /**
     * A keyed SGL with the host's rkey must lie inside the host buffer (the target may write where it was told to);
     * one that does not gets a wrong key, so the target's RDMA fails at the host's access check instead.
     */
    private static void sanitizeSgl(MemorySegment c, RawHost h) {
        MemorySegment sgl = SqeDescriptor.sgl1(c);
        if ((SglDescriptor.id(sgl) >>> 4) != 4 || SglDescriptor.key(sgl) != h.rkey()) {
            return; // not keyed, or a foreign key: the host's provider rejects any access with it
        }
        long start = SglDescriptor.address(sgl) - h.dataAddress(0);
        long len = SglDescriptor.keyedLength(sgl);
        if (start < 0 || start + len > h.dataBytes()) {
            sgl.set(ValueLayout.JAVA_INT_UNALIGNED, SglDescriptor.KEY_OFFSET, h.rkey() ^ 0x5A5A5A5A);
        }
    }

    private void connectAll() {
        admin = f.admin(0);
        cntlid = TargetFixture.cntlid(admin);
        io = connectIo();
    }

    /** Connects an I/O queue, retrying while the torn-down one with the same qid is still being detached. */
    private RawHost connectIo() {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (true) {
            RawHost h = f.host(ioQid, 32);
            RawHost.Cqe c = h.fabricConnect(31, 0, f.subnqn, TargetFixture.HOSTNQN, cntlid);
            if (c.status() == 0) {
                return h;
            }
            h.close();
            if (System.nanoTime() > deadline) {
                fail("I/O queue reconnect failed: " + NvmeStatus.describe(c.status()));
            }
            ioQid = ioQid % 8 + 1;
        }
    }

    private void reconnect(boolean adminDied) {
        if (adminDied) {
            closeHosts();
            connectAll();
            return;
        }
        io.close();
        io = null;
        io = connectIo();
    }

    private void verifyStillServing() {
        RawHost h = io;
        MemorySegment src = h.data().asSlice(0, 8 * LBA);
        for (int i = 0; i < src.byteSize(); i += 8) {
            src.set(U64, i, 0x0123456789ABCDEFL * (i + 1));
        }
        byte[] expected = src.toArray(ValueLayout.JAVA_BYTE);
        assertEquals(0, h.exec(h.rw(0, Opcodes.IO_WRITE, 1, 16, 8, false, 0, 8 * LBA)).status());
        assertEquals(0, h.exec(h.rw(0, Opcodes.IO_READ, 2, 16, 8, false, 65536, 8 * LBA)).status());
        assertEquals(-1, h.data().asSlice(65536, 8 * LBA).mismatch(MemorySegment.ofArray(expected)));
        assertTrue(h.guardsIntact());
    }

    private void closeHosts() {
        TargetFixture.close(io, admin);
        io = null;
        admin = null;
    }
}
