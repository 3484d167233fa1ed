package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rdmablock.node.store.StoreTestSupport.awaitResult;
import static io.rdmablock.node.store.StoreTestSupport.buffer;
import static io.rdmablock.node.store.StoreTestSupport.fillRandom;
import static io.rdmablock.node.store.StoreTestSupport.flush;
import static io.rdmablock.node.store.StoreTestSupport.isAllZero;
import static io.rdmablock.node.store.StoreTestSupport.read;
import static io.rdmablock.node.store.StoreTestSupport.spec;
import static io.rdmablock.node.store.StoreTestSupport.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Semantics of {@link BlockQueue} on both backends. */
class BlockQueueTest {

    private static final int MIB = 1 << 20;

    private final Arena arena = Arena.ofShared();
    private VolumeStore store;
    private BlockQueue queue;

    private StoreVolume open(IoBackend backend, int lba, long size, int dioAlignOverride) throws Exception {
        Path dir = StoreTestSupport.freshDir("bq-" + backend);
        store = VolumeStore.open(dir, StoreTestSupport.options(backend).withDirectIoAlignBytes(dioAlignOverride));
        queue = store.newQueue(32);
        assertEquals(backend, queue.backend());
        return store.create(spec("v1", size, lba));
    }

    @AfterEach
    void tearDown() {
        if (queue != null) {
            queue.close();
        }
        if (store != null) {
            store.close();
        }
        arena.close();
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldReadBackWhatWasWritten(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 16 * MIB, 0);
        MemorySegment out = buffer(arena, 64 * 1024);
        fillRandom(out, 1);
        write(queue, v, 3 * MIB, out);
        MemorySegment in = buffer(arena, 64 * 1024);
        read(queue, v, 3 * MIB, in);
        assertEquals(-1, out.mismatch(in));
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldMoveDataThroughRegisteredAndUnregisteredBuffers(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 16 * MIB, 0);
        MemorySegment pool = buffer(arena, MIB);
        queue.registerBuffers(pool);
        if (queue instanceof UringBlockQueue u) {
            assertEquals(1, u.registeredBufferCount(), "kernel accepted the region");
        }
        MemorySegment out = pool.asSlice(128 * 1024, 64 * 1024);
        fillRandom(out, 21);
        queue.submitWrite(v, 5 * MIB, out, true, 1);
        assertEquals(0, awaitResult(queue, 1));
        MemorySegment in = pool.asSlice(512 * 1024, 64 * 1024);
        read(queue, v, 5 * MIB, in);
        assertEquals(-1, out.mismatch(in), "registered buffers");
        MemorySegment outside = buffer(arena, 64 * 1024);
        read(queue, v, 5 * MIB, outside);
        assertEquals(-1, out.mismatch(outside), "unregistered buffer");
        assertThrows(IllegalStateException.class, () -> queue.registerBuffers(pool), "only once");
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldReadZeroesFromNeverWrittenSpace(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 16 * MIB, 0);
        MemorySegment in = buffer(arena, 128 * 1024);
        fillRandom(in, 2);
        read(queue, v, 8 * MIB, in);
        assertTrue(isAllZero(in));
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldCompleteFuaWriteAndFlushWithSuccess(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 4 * MIB, 0);
        MemorySegment out = buffer(arena, 8192);
        fillRandom(out, 3);
        queue.submitWrite(v, 0, out, true, 42);
        assertEquals(0, awaitResult(queue, 42));
        flush(queue, v);
        MemorySegment in = buffer(arena, 8192);
        read(queue, v, 0, in);
        assertEquals(-1, out.mismatch(in));
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldReadZeroesAfterWriteZeroesInsideWrittenData(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 4 * MIB, 0);
        MemorySegment out = buffer(arena, MIB);
        fillRandom(out, 4);
        write(queue, v, 0, out);
        queue.submitWriteZeroes(v, 4096 * 3, 4096, 5);
        assertEquals(0, awaitResult(queue, 5));
        MemorySegment in = buffer(arena, MIB);
        read(queue, v, 0, in);
        assertTrue(isAllZero(in.asSlice(4096 * 3, 4096)), "zeroed block reads zero");
        assertEquals(-1, out.asSlice(0, 4096 * 3).mismatch(in.asSlice(0, 4096 * 3)), "data before intact");
        assertEquals(-1, out.asSlice(4096 * 4).mismatch(in.asSlice(4096 * 4)), "data after intact");
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldReadZeroesAfterTrimExactlyWhenAdvertised(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 4 * MIB, 0);
        MemorySegment out = buffer(arena, MIB);
        fillRandom(out, 5);
        write(queue, v, 0, out);
        queue.submitTrim(v, 8192, 4096, 6);
        assertEquals(0, awaitResult(queue, 6));
        MemorySegment in = buffer(arena, MIB);
        read(queue, v, 0, in);
        if (store.zeroesAfterTrim()) {
            assertTrue(isAllZero(in.asSlice(8192, 4096)), "trimmed block reads zero as advertised");
        } else {
            assertEquals(-1, out.asSlice(8192, 4096).mismatch(in.asSlice(8192, 4096)), "no-op trim keeps data");
        }
        assertEquals(-1, out.asSlice(0, 8192).mismatch(in.asSlice(0, 8192)));
        assertEquals(-1, out.asSlice(12288).mismatch(in.asSlice(12288)));
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldServeNewSpaceAsZeroesAfterResize(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 4 * MIB, 0);
        MemorySegment out = buffer(arena, 4096);
        fillRandom(out, 6);
        write(queue, v, 4 * MIB - 4096, out);
        assertThrows(IllegalArgumentException.class, () -> queue.submitRead(v, 4 * MIB, out, 1),
                "I/O past the end fails before the resize");
        store.resize("v1", 8 * MIB);
        assertEquals(8 * MIB, v.sizeBytes());
        MemorySegment in = buffer(arena, 2 * MIB);
        read(queue, v, 4 * MIB, in);
        assertTrue(isAllZero(in), "new space reads zero");
        MemorySegment old = buffer(arena, 4096);
        read(queue, v, 4 * MIB - 4096, old);
        assertEquals(-1, out.mismatch(old), "old data intact");
        write(queue, v, 8 * MIB - 4096, out);
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldKeep512ByteLbaIoByteExactOnA4096AlignedFilesystem(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 512, 2 * MIB, 4096);
        // an aligned 64 KiB base, then misaligned 512-byte-granular writes over it (buffered descriptor)
        MemorySegment base = buffer(arena, 64 * 1024);
        fillRandom(base, 7);
        write(queue, v, 0, base);
        MemorySegment expected = arena.allocate(64 * 1024, 4096);
        expected.copyFrom(base);
        long[][] patches = {{512, 512}, {1536, 3072}, {4096 + 512, 8192}, {60 * 1024, 2048}};
        int seed = 100;
        for (long[] p : patches) {
            MemorySegment w = buffer(arena, p[1]);
            fillRandom(w, seed++);
            write(queue, v, p[0], w);
            expected.asSlice(p[0], p[1]).copyFrom(w);
        }
        // read back aligned (O_DIRECT), misaligned, and through an odd buffer address
        MemorySegment in = buffer(arena, 64 * 1024);
        read(queue, v, 0, in);
        assertEquals(-1, expected.mismatch(in), "aligned read sees misaligned writes");
        MemorySegment odd = arena.allocate(4096 + 512, 4096).asSlice(512, 4096);
        read(queue, v, 1024, odd);
        assertEquals(-1, expected.asSlice(1024, 4096).mismatch(odd), "misaligned read");
        flush(queue, v);
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldStageMisalignedBuffersThroughBounceBuffersByteExact(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 4 * MIB, 0);
        MemorySegment out = arena.allocate(8192 + 64, 4096).asSlice(64, 8192); // like in-capsule data
        fillRandom(out, 31);
        write(queue, v, 4096, out);
        MemorySegment in = arena.allocate(8192 + 64, 4096).asSlice(64, 8192);
        read(queue, v, 4096, in);
        assertEquals(-1, out.mismatch(in), "misaligned read of misaligned write");
        MemorySegment aligned = buffer(arena, 8192);
        read(queue, v, 4096, aligned);
        assertEquals(-1, out.mismatch(aligned), "aligned read");
        MemorySegment big = arena.allocate(MIB + 64, 4096).asSlice(64, MIB); // grows the slot's bounce buffer
        fillRandom(big, 32);
        write(queue, v, MIB, big);
        MemorySegment bigIn = buffer(arena, MIB);
        read(queue, v, MIB, bigIn);
        assertEquals(-1, big.mismatch(bigIn));
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldZeroAndTrimSingle512ByteBlocksInsideAFilesystemBlock(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 512, 2 * MIB, 0);
        MemorySegment out = buffer(arena, 8192);
        fillRandom(out, 41);
        write(queue, v, 0, out);
        queue.submitWriteZeroes(v, 1024, 512, 1);
        assertEquals(0, awaitResult(queue, 1));
        queue.submitTrim(v, 2048, 512, 2);
        assertEquals(0, awaitResult(queue, 2));
        MemorySegment in = buffer(arena, 8192);
        read(queue, v, 0, in);
        assertTrue(isAllZero(in.asSlice(1024, 512)), "write zeroes");
        if (store.zeroesAfterTrim()) {
            assertTrue(isAllZero(in.asSlice(2048, 512)), "trim as advertised");
        }
        assertEquals(-1, out.asSlice(0, 1024).mismatch(in.asSlice(0, 1024)));
        assertEquals(-1, out.asSlice(1536, 512).mismatch(in.asSlice(1536, 512)));
        assertEquals(-1, out.asSlice(2560).mismatch(in.asSlice(2560)));
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldRejectSubmitWhenQueueIsFull(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 4 * MIB, 0);
        MemorySegment buf = buffer(arena, 4096);
        for (int i = 0; i < queue.capacity(); i++) {
            queue.submitRead(v, (long) i * 4096, buf, i);
        }
        assertEquals(queue.capacity(), queue.inFlight());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> queue.submitFlush(v, 99));
        assertTrue(e.getMessage().contains("capacity=32"), e.getMessage());
        long[] ud = new long[64];
        int[] res = new int[64];
        int got = 0;
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (got < 32 && System.nanoTime() < deadline) {
            queue.awaitCompletion(100_000_000L);
            got += queue.reap(ud, res, 64);
        }
        assertEquals(32, got);
        assertEquals(0, queue.inFlight());
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldRejectMisalignedOrOutOfRangeArguments(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 4 * MIB, 0);
        MemorySegment buf = buffer(arena, 4096);
        var e = assertThrows(IllegalArgumentException.class, () -> queue.submitRead(v, 512, buf, 1));
        assertTrue(e.getMessage().contains("offsetBytes=512") && e.getMessage().contains("lbaSizeBytes=4096"),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> queue.submitWrite(v, -4096, buf, false, 1));
        assertThrows(IllegalArgumentException.class, () -> queue.submitTrim(v, 4 * MIB, 4096, 1));
        assertThrows(IllegalArgumentException.class, () -> queue.submitWriteZeroes(v, Long.MAX_VALUE & ~4095L,
                8192, 1));
        assertThrows(IllegalArgumentException.class,
                () -> queue.submitWrite(v, 0, MemorySegment.ofArray(new byte[4096]), false, 1), "heap segment");
        assertEquals(0, queue.inFlight(), "nothing queued");
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldCompleteZeroLengthCommandsWithSuccess(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 4 * MIB, 0);
        queue.submitTrim(v, 4 * MIB, 0, 11);
        assertEquals(0, awaitResult(queue, 11));
        queue.submitRead(v, 0, buffer(arena, 4096).asSlice(0, 0), 12);
        assertEquals(0, awaitResult(queue, 12));
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldFailIoOnDeletedVolumeWithEnxio(IoBackend backend) throws Exception {
        StoreVolume v = open(backend, 4096, 4 * MIB, 0);
        store.delete("v1");
        assertTrue(v.isDeleted());
        queue.submitRead(v, 0, buffer(arena, 4096), 13);
        assertEquals(-Syscalls.ENXIO, awaitResult(queue, 13));
        assertFalse(store.find("v1").isPresent());
    }
}
