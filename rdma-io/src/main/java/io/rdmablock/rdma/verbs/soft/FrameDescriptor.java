package io.rdmablock.rdma.verbs.soft;

import java.nio.ByteBuffer;

/**
 * Layout of one queue-pair frame on the soft provider's TCP stream (big-endian). Every frame is a 32-byte header
 * followed by {@code payloadLength} bytes of payload.
 *
 * <pre>
 *  0        1        2        4                8                12               16
 *  +--------+--------+--------+----------------+----------------+----------------+
 *  | type   | synd   | rsvd   | payloadLength  | seq (MSN)      | rkey           |
 *  +--------+--------+--------+----------------+----------------+----------------+
 *  16                                          24               28               32
 *  +-------------------------------------------+----------------+----------------+
 *  | remoteAddr (u64)                          | imm            | readLength     |
 *  +-------------------------------------------+----------------+----------------+
 * </pre>
 *
 * <p>Requests (SEND, SEND_IMM, WRITE, WRITE_IMM, READ_REQ) carry a per-direction message sequence number {@code seq}
 * that counts send work requests in posting order. Responses: ACK (cumulative: every request up to and including
 * {@code seq} was executed), READ_RESP (payload of the READ {@code seq}; also acknowledges the requests before it), NAK
 * (request {@code seq} failed with syndrome {@code synd}; every request before it was executed), RNR_NAK (request
 * {@code seq} found no receive posted; the requester retransmits from {@code seq}). Source: modelled on the IB RC
 * transport (IBTA Vol. 1 ch. 9.7) with TCP providing reliability, as SoftiWARP does with MPA/DDP.
 */
final class FrameDescriptor {
    static final int HEADER_LENGTH = 32;

    static final int TYPE_OFFSET = 0;
    static final int SYNDROME_OFFSET = 1;
    static final int PAYLOAD_LENGTH_OFFSET = 4;
    static final int SEQ_OFFSET = 8;
    static final int RKEY_OFFSET = 12;
    static final int REMOTE_ADDR_OFFSET = 16;
    static final int IMM_OFFSET = 24;
    static final int READ_LENGTH_OFFSET = 28;

    static final byte SEND = 1;
    static final byte SEND_IMM = 2;
    static final byte WRITE = 3;
    static final byte WRITE_IMM = 4;
    static final byte READ_REQ = 5;
    static final byte READ_RESP = 6;
    static final byte ACK = 7;
    static final byte NAK = 8;
    static final byte RNR_NAK = 9;

    /** NAK syndromes. */
    static final byte SYND_REM_ACCESS = 1;
    static final byte SYND_REM_INV_REQ = 2;
    static final byte SYND_REM_OP = 3;

    private FrameDescriptor() {
    }

    /** Writes a header at positions 0..31 of {@code b} and leaves it ready to be written (position 0, limit 32). */
    static void encode(ByteBuffer b, byte type, byte syndrome, int payloadLength, int seq, int rkey, long remoteAddr,
                       int imm, int readLength) {
        b.clear();
        b.put(TYPE_OFFSET, type);
        b.put(SYNDROME_OFFSET, syndrome);
        b.putShort(2, (short) 0);
        b.putInt(PAYLOAD_LENGTH_OFFSET, payloadLength);
        b.putInt(SEQ_OFFSET, seq);
        b.putInt(RKEY_OFFSET, rkey);
        b.putLong(REMOTE_ADDR_OFFSET, remoteAddr);
        b.putInt(IMM_OFFSET, imm);
        b.putInt(READ_LENGTH_OFFSET, readLength);
        b.limit(HEADER_LENGTH);
    }

    static boolean isRequest(byte type) {
        return type >= SEND && type <= READ_REQ;
    }
}
