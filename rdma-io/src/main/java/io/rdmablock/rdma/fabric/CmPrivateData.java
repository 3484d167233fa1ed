package io.rdmablock.rdma.fabric;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * RDMA CM private data for an NVMe/RDMA queue (NVMe/RDMA Transport 1.0 section 3.2, Figures 3-5). Little-endian.
 *
 * <pre>
 * Request (32 bytes): 0 RECFMT (0) | 2 QID | 4 HRQSIZE (host receive queue entries = SQ size, 1-based)
 *                     | 6 HSQSIZE (host send queue size, 0-based sqsize) | 8 CNTLID | 10..31 reserved
 * Accept  (32 bytes): 0 RECFMT (0) | 2 CRQSIZE (controller receive queue entries) | 4..31 reserved
 * Reject  (4 bytes):  0 RECFMT (0) | 2 STS (reject status, {@code REJECT_*} below)
 * </pre>
 * All fit the 56-byte rdma_cm private-data limit.
 */
public final class CmPrivateData {
    public static final int REQUEST_LENGTH = 32;
    public static final int ACCEPT_LENGTH = 32;
    public static final int REJECT_LENGTH = 4;

    public static final int REJECT_INVALID_PRIVATE_DATA_LENGTH = 0x01;
    public static final int REJECT_INVALID_RECFMT = 0x02;
    public static final int REJECT_INVALID_QID = 0x03;
    public static final int REJECT_INVALID_HSQSIZE = 0x04;
    public static final int REJECT_INVALID_HRQSIZE = 0x05;
    public static final int REJECT_NO_RESOURCES = 0x06;
    public static final int REJECT_INVALID_IRD = 0x07;
    public static final int REJECT_INVALID_ORD = 0x08;
    public static final int REJECT_INVALID_CNTLID = 0x09;

    private CmPrivateData() {
    }

    /** Decoded request private data. {@code hsqsize} is 0-based as on the wire. */
    public record Request(int recfmt, int qid, int hrqsize, int hsqsize, int cntlid) {
        public byte[] encode() {
            ByteBuffer b = ByteBuffer.allocate(REQUEST_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            b.putShort((short) recfmt).putShort((short) qid).putShort((short) hrqsize).putShort((short) hsqsize)
                    .putShort((short) cntlid);
            return b.array();
        }

        /**
         * @throws IllegalArgumentException if shorter than {@link #REQUEST_LENGTH}
         */
        public static Request decode(byte[] data) {
            if (data == null || data.length < REQUEST_LENGTH) {
                throw new IllegalArgumentException("invalid NVMe/RDMA request private data: lengthBytes="
                        + (data == null ? 0 : data.length) + ", min=" + REQUEST_LENGTH);
            }
            ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
            return new Request(Short.toUnsignedInt(b.getShort()), Short.toUnsignedInt(b.getShort()),
                    Short.toUnsignedInt(b.getShort()), Short.toUnsignedInt(b.getShort()),
                    Short.toUnsignedInt(b.getShort()));
        }
    }

    /** Decoded accept private data. */
    public record Accept(int recfmt, int crqsize) {
        public byte[] encode() {
            ByteBuffer b = ByteBuffer.allocate(ACCEPT_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            b.putShort((short) recfmt).putShort((short) crqsize);
            return b.array();
        }

        public static Accept decode(byte[] data) {
            if (data == null || data.length < 4) {
                throw new IllegalArgumentException("invalid NVMe/RDMA accept private data: lengthBytes="
                        + (data == null ? 0 : data.length) + ", min=4");
            }
            ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
            return new Accept(Short.toUnsignedInt(b.getShort()), Short.toUnsignedInt(b.getShort()));
        }
    }

    /** Decoded reject private data. */
    public record Reject(int recfmt, int sts) {
        public byte[] encode() {
            ByteBuffer b = ByteBuffer.allocate(REJECT_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            b.putShort((short) recfmt).putShort((short) sts);
            return b.array();
        }

        /**
         * Decodes; returns null when the data is not an NVMe/RDMA reject: too short, RECFMT not 0, or STS outside
         * 01h-09h. An InfiniBand/RoCE CM REJ always carries 148 bytes of private data, zero-filled when the rejecter
         * gave none (e.g. the kernel CM answering a connect to a port nobody listens on, reject reason 8 "invalid
         * service id"), so zeroes must not read as an NVMe/RDMA reject.
         */
        public static Reject decode(byte[] data) {
            if (data == null || data.length < REJECT_LENGTH) {
                return null;
            }
            ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
            int recfmt = Short.toUnsignedInt(b.getShort());
            int sts = Short.toUnsignedInt(b.getShort());
            if (recfmt != 0 || sts < REJECT_INVALID_PRIVATE_DATA_LENGTH || sts > REJECT_INVALID_CNTLID) {
                return null;
            }
            return new Reject(recfmt, sts);
        }
    }
}
