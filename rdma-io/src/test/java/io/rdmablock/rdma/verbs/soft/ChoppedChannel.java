package io.rdmablock.rdma.verbs.soft;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ScatteringByteChannel;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A socket's receive side that hands out at most the next size of a cyclic schedule per read (the rest stays in the
 * socket for the next read), so a test decides where the stream is cut: inside a 32-byte frame header, one byte
 * before or after the 16 KiB copy threshold, at the end of the 64 KiB stage.
 */
final class ChoppedChannel implements ScatteringByteChannel {
    private final ScatteringByteChannel ch;
    private final int[] schedule;
    private final AtomicLong cuts;
    private int next;

    /** {@code cuts} counts the reads that asked for more than the schedule gave (across every channel it is given). */
    ChoppedChannel(ScatteringByteChannel ch, int[] schedule, AtomicLong cuts) {
        this.ch = ch;
        this.schedule = schedule;
        this.cuts = cuts;
    }

    private int nextCap() {
        int cap = schedule[next];
        next = (next + 1) % schedule.length;
        return cap;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        int cap = nextCap();
        int limit = dst.limit();
        if (dst.remaining() > cap) {
            cuts.incrementAndGet();
            dst.limit(dst.position() + cap);
        }
        try {
            return ch.read(dst);
        } finally {
            dst.limit(limit);
        }
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        long cap = nextCap();
        int[] limits = new int[length];
        long room = 0;
        for (int i = 0; i < length; i++) {
            ByteBuffer b = dsts[offset + i];
            limits[i] = b.limit();
            int take = (int) Math.min(b.remaining(), Math.max(0, cap - room));
            room += b.remaining();
            b.limit(b.position() + take);
        }
        if (room > cap) {
            cuts.incrementAndGet();
        }
        try {
            return ch.read(dsts, offset, length);
        } finally {
            for (int i = 0; i < length; i++) {
                dsts[offset + i].limit(limits[i]);
            }
        }
    }

    @Override
    public long read(ByteBuffer[] dsts) throws IOException {
        return read(dsts, 0, dsts.length);
    }

    @Override
    public boolean isOpen() {
        return ch.isOpen();
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
