package io.rdmablock.tools.nbd;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One request in flight on a connection: its 16-byte simple-reply header and its payload buffer, preallocated when the
 * connection enters transmission. Requests longer than the slot buffer get a buffer of their own for their lifetime.
 * A slot is owned by exactly one party at a time: the reader (parsing), the device (I/O), the writer (reply).
 */
final class NbdSlot {
    final ByteBuffer replyHeader = ByteBuffer.allocateDirect(NbdProtocol.SIMPLE_REPLY_BYTES).order(ByteOrder.BIG_ENDIAN);
    final MemorySegment buffer;
    final ByteBuffer bufferView;

    /** Payload of the current request: a prefix of {@link #buffer} or a large buffer. */
    MemorySegment data;
    ByteBuffer dataView;
    /** Non-null when {@link #data} is a large buffer from {@link java.lang.foreign.Arena#ofShared()}. */
    Arena largeArena;
    /** True when {@link #data} is a large buffer from the device's registered pool. */
    boolean largeFromDevice;

    long cookie;
    int type;
    int lengthBytes;
    /** NBD errno of the reply; 0 = success. */
    volatile int error;
    /** Next slot in whichever {@link SlotStack} holds this slot. */
    NbdSlot next;

    NbdSlot(MemorySegment buffer) {
        this.buffer = buffer;
        this.bufferView = buffer.asByteBuffer();
    }

    /** Fills the reply header for the current request. */
    ByteBuffer reply() {
        replyHeader.clear();
        replyHeader.putInt(NbdProtocol.SIMPLE_REPLY_MAGIC).putInt(error).putLong(cookie).flip();
        return replyHeader;
    }

    /** True when the reply carries {@link #lengthBytes} of data (a successful READ). */
    boolean replyHasData() {
        return type == NbdProtocol.CMD_READ && error == 0 && lengthBytes > 0;
    }
}
