package io.rdmablock.node.replica;

/**
 * One command a primary forwards to a secondary, as it goes into the SQE (NVMe Base 2.0 figure 88 layout): opcode,
 * nsid, CDW10..CDW15 exactly as the host sent them, the primary's epoch (CDW2 low / CDW3 high, see
 * docs/replication.md) and the keyed SGL naming the primary's own registered buffer (address, length in bytes,
 * rkey) that the secondary fetches with RDMA READ; length 0 = no data. Preallocated per request slot and refilled,
 * never shared between threads.
 */
public final class ForwardCommand {
    public int opcode;
    public int nsid;
    public long epoch;
    public int cdw10;
    public int cdw11;
    public int cdw12;
    public int cdw13;
    public int cdw14;
    public int cdw15;
    /** Start of the payload in the primary's registered memory (virtual address). */
    public long dataAddress;
    /** Payload length in bytes; 0 when the command has no data. */
    public int dataLength;
    /** rkey of the memory region holding the payload (registered with REMOTE_READ). */
    public int rkey;
    /** Byte range of the volume the command changes (for the missed-regions bitmap); length 0 = none (FLUSH). */
    public long offsetBytes;
    public long lengthBytes;
}
