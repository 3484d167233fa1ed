package io.rdmablock.node.store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Persists the allocation map (one bit per 1 MiB chunk of a volume that has been written, for NUSE) off the pollers:
 * the first write into a chunk ({@link StoreVolume#noteWritten}) hands its bit here, and one daemon thread puts it
 * into the metadata database ({@link MetadataDb#putChunk}, an unsynced RocksDB write). So a poller never waits on
 * RocksDB (a memtable flush or write stall), and the cost on the data path is one lock-free queue offer per new
 * chunk. Accounting only: a bit lost in a crash only under-reports NUSE until the chunk is written again, as with
 * the unsynced write itself; a database that cannot write is logged once and does not fail the data write.
 */
final class ChunkMapWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChunkMapWriter.class);
    /** Longest wait of {@link #close} for the thread to write what was handed over. */
    private static final long CLOSE_WAIT_MS = 5_000;

    private record Bit(String id, long chunk) {
    }

    private final MetadataDb meta;
    private final ConcurrentLinkedQueue<Bit> pending = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean closing;
    private boolean warned;

    ChunkMapWriter(MetadataDb meta, String name) {
        this.meta = meta;
        this.thread = Thread.ofPlatform().daemon().name(name).unstarted(this::run);
        this.thread.start();
    }

    /** Hands over the bit of {@code chunk} of volume {@code id}; any thread, never blocks. */
    void submit(String id, long chunk) {
        pending.offer(new Bit(id, chunk));
        LockSupport.unpark(thread);
    }

    private void run() {
        while (!closing) {
            if (!drain()) {
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(100));
            }
        }
        drain();
    }

    /** Writes every bit handed over so far; true when there was one. */
    private boolean drain() {
        boolean any = false;
        Bit b;
        while ((b = pending.poll()) != null) {
            any = true;
            try {
                meta.putChunk(b.id(), b.chunk());
            } catch (RuntimeException e) {
                if (!warned) {
                    warned = true;
                    LOG.warn("allocation map not persisted (accounting only, data unaffected): id={}, chunk={}: {}",
                            b.id(), b.chunk(), e.toString());
                }
            }
        }
        return any;
    }

    /** Writes what was handed over (bounded wait), then stops the thread. Before the database closes. */
    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(thread);
        try {
            thread.join(CLOSE_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("allocation map writer did not stop within {} ms; {} bits not persisted", CLOSE_WAIT_MS,
                    pending.size());
        }
    }
}
