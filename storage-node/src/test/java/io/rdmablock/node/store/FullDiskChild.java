package io.rdmablock.node.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Child process of {@link FullDiskRecoveryTest}: opens a store in {@code dataDir}, creates two volumes (metadata
 * rows in the write-ahead log, not yet in a table file), fills the file system to the last byte with a filler file,
 * prints {@code FULL} and waits to be killed (at most 60 s). Arguments: dataDir.
 */
final class FullDiskChild {
    private FullDiskChild() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults());
        store.create(StoreTestSupport.spec("full1", 16L << 20, 4096));
        store.create(StoreTestSupport.spec("full2", 16L << 20, 4096));
        try (FileChannel ch = FileChannel.open(dir.resolveSibling("filler"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(64 * 1024);
            for (int size = 64 * 1024; size >= 512; size /= 2) { // down to the last sectors
                try {
                    while (true) {
                        b.clear().limit(size);
                        ch.write(b);
                    }
                } catch (IOException e) {
                    // ENOSPC at this size: try smaller writes
                }
            }
        }
        System.out.println("FULL");
        System.out.flush();
        Thread.sleep(60_000); // a child process held until the parent kills it; the sleep only bounds an orphan
        store.close();
    }
}
