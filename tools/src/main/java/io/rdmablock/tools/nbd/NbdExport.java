package io.rdmablock.tools.nbd;

import io.rdmablock.initiator.BlockDevice;

/**
 * One exported device and what the server advertises for it.
 *
 * <p>Block sizes (NBD_INFO_BLOCK_SIZE): minimum = the device's LBA size (requests not aligned to it in offset or
 * length are answered EINVAL: there is no read-modify-write); preferred = max(4096, LBA size); maximum payload =
 * {@code maxPayloadBytes} (READ/WRITE longer than it are answered EOVERFLOW; TRIM and WRITE_ZEROES carry no payload
 * and may be longer).
 *
 * @param name            export name; the empty name (default export) also selects it
 * @param description     free text for NBD_INFO_DESCRIPTION
 * @param device          the device served; shared by every connection
 * @param readOnly        advertise NBD_FLAG_READ_ONLY and answer EPERM to writes
 * @param maxPayloadBytes maximum READ/WRITE length, a multiple of the LBA size, at most 32 MiB
 */
public record NbdExport(String name, String description, BlockDevice device, boolean readOnly, int maxPayloadBytes) {

    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 32 << 20;

    public NbdExport {
        if (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > NbdProtocol.MAX_STRING_BYTES) {
            throw new IllegalArgumentException("invalid export name: length exceeds " + NbdProtocol.MAX_STRING_BYTES);
        }
        int lba = device.lbaSize();
        if (maxPayloadBytes < lba || maxPayloadBytes % lba != 0 || maxPayloadBytes > DEFAULT_MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException("invalid --max-payload: " + maxPayloadBytes
                    + ", min=" + lba + ", max=" + DEFAULT_MAX_PAYLOAD_BYTES + ", multiple of " + lba);
        }
    }

    public int minBlockBytes() {
        return device.lbaSize();
    }

    public int preferredBlockBytes() {
        return Math.max(4096, device.lbaSize());
    }

    /**
     * Transmission flags. CAN_MULTI_CONN holds because every connection of this server submits to the same
     * {@link BlockDevice} and the server keeps no cache of its own: a reply is sent only after the device completed
     * the command, {@link BlockDevice#flush()} makes every write the device completed durable whichever connection
     * sent it (an NVMe FLUSH covers the whole namespace, all queues), and a FUA write is durable before its reply.
     * So the effect of FLUSH and FUA is visible on all connections when the reply is sent, as proto.md requires.
     */
    public int transmissionFlags() {
        int f = NbdProtocol.FLAG_HAS_FLAGS | NbdProtocol.FLAG_SEND_FLUSH | NbdProtocol.FLAG_SEND_FUA
                | NbdProtocol.FLAG_SEND_TRIM | NbdProtocol.FLAG_SEND_WRITE_ZEROES | NbdProtocol.FLAG_CAN_MULTI_CONN;
        return readOnly ? f | NbdProtocol.FLAG_READ_ONLY : f;
    }
}
