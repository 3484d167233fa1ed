package io.rdmablock.initiator.local;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.DeviceLostException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class FileBlockDeviceTest {
    @TempDir
    Path dir;

    FileBlockDevice open(long size) {
        Path f = dir.resolve("d.img");
        FileBlockDevice.createFile(f, size);
        return new FileBlockDevice(f, 512, false, 2);
    }

    @Test
    void shouldRoundTripThroughRegisteredBuffers() {
        try (FileBlockDevice d = open(1 << 20)) {
            MemorySegment b = d.allocateBuffer(4096);
            assertEquals(0, b.address() % 4096);
            b.fill((byte) 7);
            d.writeSync(8192, b, true);
            MemorySegment r = d.allocateBuffer(4096);
            d.readSync(8192, r);
            assertEquals(-1, b.mismatch(r));
            d.writeZeroesSync(8192, 4096);
            d.readSync(8192, r);
            assertEquals(0, r.get(ValueLayout.JAVA_BYTE, 100));
            d.freeBuffer(b);
            d.freeBuffer(r);
        }
    }

    @Test
    void shouldRejectBadRangesAndHeapSegments() {
        try (FileBlockDevice d = open(1 << 20); Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(512);
            assertThrows(IllegalArgumentException.class, () -> d.readSync(1 << 20, s));
            assertThrows(IllegalArgumentException.class, () -> d.readSync(100, s));
            assertThrows(IllegalArgumentException.class, () -> d.readSync((1 << 20) - 512, a.allocate(1024)));
            assertThrows(IllegalArgumentException.class, () -> d.readSync(0, MemorySegment.ofArray(new byte[512])));
            assertThrows(IllegalArgumentException.class, () -> d.trimSync(-512, 512));
        }
    }

    @Test
    void shouldFailIoAfterClose() {
        FileBlockDevice d = open(1 << 20);
        MemorySegment b = d.allocateBuffer(512);
        d.close();
        d.close();
        CompletionException e = assertThrows(CompletionException.class, () -> d.read(0, b).join());
        assertInstanceOf(DeviceLostException.class, e.getCause());
    }
}
