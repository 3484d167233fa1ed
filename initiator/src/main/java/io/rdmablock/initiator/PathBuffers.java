package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.RegisteredBuffers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The data buffers of a multipath device ({@code BlockDevice.allocateBuffer}): page-aligned (4096 B) native memory
 * owned here and registered on the protection domain of every path's device, the ones connected when the buffer is
 * allocated and every one connected later ({@link #adoptAll}), so I/O stays zero copy after a failover: the new
 * primary's queues find the buffer's keys as the old one's did. A device where the registration failed (logged)
 * stages that buffer through its bounce buffers, as for any unregistered segment (so does a device whose connect
 * finished while a buffer was being allocated: a window of one allocation, correct but copied). Allocation and release are
 * synchronized (rare); the data path only looks keys up in each device's {@link RegisteredBuffers}.
 */
final class PathBuffers {
    private static final Logger LOG = LoggerFactory.getLogger(PathBuffers.class);

    private final long maxBufferBytes;
    /** Start address of each buffer this device handed out, to its segment and arena. */
    private final Map<Long, Owned> owned = new HashMap<>();
    private boolean closed;

    private record Owned(MemorySegment segment, Arena arena) {
    }

    PathBuffers(long maxBufferBytes) {
        this.maxBufferBytes = maxBufferBytes;
    }

    /**
     * Allocates a buffer and registers it on every device in {@code devices}.
     *
     * @throws IllegalArgumentException when lengthBytes is outside 1 .. maxBufferBytes
     * @throws IllegalStateException    after {@link #close()}, or when no device could register it
     */
    synchronized MemorySegment allocate(long lengthBytes, List<NvmeBlockDevice> devices) {
        if (lengthBytes < 1 || lengthBytes > maxBufferBytes) {
            throw new IllegalArgumentException("invalid lengthBytes: lengthBytes=" + lengthBytes + ", min=1, max="
                    + maxBufferBytes);
        }
        if (closed) {
            throw new IllegalStateException("device is closed");
        }
        Arena arena = Arena.ofShared();
        MemorySegment seg = arena.allocate(lengthBytes, RegisteredBuffers.PAGE_BYTES);
        int registered = 0;
        RuntimeException first = null;
        for (NvmeBlockDevice d : devices) {
            try {
                if (adopt(d, seg)) {
                    registered++;
                }
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        if (registered == 0 && first != null) {
            arena.close();
            throw first;
        }
        owned.put(seg.address(), new Owned(seg, arena));
        return seg;
    }

    /** Registers every buffer handed out so far on {@code d} (a path's device that just connected). */
    synchronized void adoptAll(NvmeBlockDevice d) {
        for (Owned o : owned.values()) {
            try {
                adopt(d, o.segment);
            } catch (RuntimeException e) {
                LOG.warn("buffer 0x{} not registered on a new path (I/O with it is copied there): {}",
                        Long.toHexString(o.segment.address()), e.getMessage());
            }
        }
    }

    /** True when {@code buffer} starts a buffer of this device. */
    synchronized boolean owns(MemorySegment buffer) {
        return owned.containsKey(buffer.address());
    }

    /**
     * Deregisters {@code buffer} from every device and frees it.
     *
     * @throws IllegalArgumentException when it does not start a buffer from {@link #allocate}
     */
    synchronized void free(MemorySegment buffer, List<NvmeBlockDevice> devices) {
        Owned o = owned.remove(buffer.address());
        if (o == null) {
            throw new IllegalArgumentException("not a buffer from allocateBuffer: address=0x"
                    + Long.toHexString(buffer.address()));
        }
        Map<RegisteredBuffers, Boolean> seen = new IdentityHashMap<>();
        for (NvmeBlockDevice d : devices) {
            RegisteredBuffers b = d.buffers();
            if (b != null && seen.put(b, Boolean.TRUE) == null
                    && b.find(o.segment.address(), o.segment.byteSize()) != null) {
                try {
                    b.free(o.segment);
                } catch (RuntimeException e) {
                    LOG.debug("deregistering a buffer on a closed path: {}", e.getMessage());
                }
            }
        }
        o.arena.close();
    }

    /** Frees every buffer; call after every device was closed (their registrations are gone then). Idempotent. */
    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Owned o : owned.values()) {
            o.arena.close();
        }
        owned.clear();
    }

    private static boolean adopt(NvmeBlockDevice d, MemorySegment seg) {
        RegisteredBuffers b = d.buffers();
        if (b == null || b.find(seg.address(), seg.byteSize()) != null) {
            return b != null;
        }
        b.adopt(seg);
        return true;
    }
}
