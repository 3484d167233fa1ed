package io.rdmablock.rdma.fabric.tcp;

import io.rdmablock.rdma.fabric.Wire;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Header and data digests of NVMe/TCP (Transport Specification 1.0 section 3.6.1): CRC32C (Castagnoli, as
 * {@link CRC32C}) over the PDU header ({@code HLEN} bytes) or the PDU data ({@code PLEN - PDO - DDGST} bytes), sent
 * as a 4-byte little-endian field right after what it covers (Linux {@code nvme_tcp_hdgst}/{@code nvme_tcp_ddgst}:
 * {@code crc32c(~0, ...)} complemented, {@code put_unaligned_le32}). A {@link CRC32C} object is not thread-safe:
 * one per connection, reused ({@link CRC32C#reset} here), nothing allocated per PDU when the caller passes
 * {@link ByteBuffer} views it keeps.
 */
public final class PduDigest {
    /** Bytes of a header or data digest field. */
    public static final int LENGTH = 4;

    private PduDigest() {
    }

    /** CRC32C of {@code buf}'s remaining bytes (position and limit left unchanged). */
    public static int crc32c(CRC32C crc, ByteBuffer buf) {
        crc.reset();
        int pos = buf.position();
        crc.update(buf);
        buf.position(pos);
        return (int) crc.getValue();
    }

    /** CRC32C of {@code lengthBytes} bytes of {@code s} from {@code offset} (allocates a buffer view: tests, setup). */
    public static int crc32c(CRC32C crc, MemorySegment s, long offset, int lengthBytes) {
        return crc32c(crc, s.asSlice(offset, lengthBytes).asByteBuffer());
    }

    /**
     * Writes the header digest of {@code pdu}'s first {@code hlen} bytes at offset {@code hlen}.
     *
     * @throws IndexOutOfBoundsException when {@code pdu} is shorter than {@code hlen + 4}
     */
    public static void putHeaderDigest(CRC32C crc, MemorySegment pdu, int hlen) {
        Wire.u32(pdu, hlen, crc32c(crc, pdu, 0, hlen));
    }

    /**
     * Checks the header digest at offset {@code hlen} of {@code pdu} against its first {@code hlen} bytes.
     *
     * @throws PduFormatException with {@link TermPdu#FES_HEADER_DIGEST} when they differ
     */
    public static void checkHeaderDigest(CRC32C crc, MemorySegment pdu, int hlen) {
        int expected = crc32c(crc, pdu, 0, hlen);
        int received = Wire.u32(pdu, hlen);
        if (expected != received) {
            throw new PduFormatException(TermPdu.FES_HEADER_DIGEST, 0, "header digest error: type="
                    + PduHeader.type(pdu) + ", received=0x" + Integer.toHexString(received) + ", expected=0x"
                    + Integer.toHexString(expected));
        }
    }

    /**
     * Checks a data digest: {@code received} (the little-endian field after the data) against the CRC32C of
     * {@code data}'s remaining bytes.
     *
     * @throws PduFormatException with {@link TermPdu#FES_NONE} ({@link PduFormatException#isDataDigestError}) when
     *         they differ
     */
    public static void checkDataDigest(CRC32C crc, ByteBuffer data, int received) {
        int expected = crc32c(crc, data);
        if (expected != received) {
            throw new PduFormatException(TermPdu.FES_NONE, 0, "data digest error: lengthBytes=" + data.remaining()
                    + ", received=0x" + Integer.toHexString(received) + ", expected=0x"
                    + Integer.toHexString(expected));
        }
    }
}
