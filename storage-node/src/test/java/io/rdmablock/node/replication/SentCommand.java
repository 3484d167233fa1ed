package io.rdmablock.node.replication;

import io.rdmablock.nvmf.host.NvmCommand;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;

import java.lang.foreign.MemorySegment;

/**
 * What a fake {@link ForwardQueue} saw of one command, decoded from the SQE it would have put on the wire: opcode,
 * nsid, epoch (CDW2..CDW3), SLBA (CDW10..CDW11), NLB (CDW12, 0-based) and the keyed SGL (address, bytes, rkey).
 */
public record SentCommand(int opcode, int nsid, long epoch, long slba, int cdw12, long dataAddress, int dataLength,
                   int rkey, int tag) {

    /** A host command forwarded as {@link ForwardQueue#forward} gets it. */
    public static SentCommand forwarded(MemorySegment sqe, long epoch, long address, int length, int rkey, int tag) {
        return new SentCommand(SqeDescriptor.opcode(sqe), SqeDescriptor.nsid(sqe), epoch, SqeDescriptor.slba(sqe),
                SqeDescriptor.cdw(sqe, 12), address, length, rkey, tag);
    }

    /** A command built by the caller, as {@link ForwardQueue#submit} gets it. */
    public static SentCommand built(NvmCommand c, int tag) {
        MemorySegment sqe = MemorySegment.ofArray(new byte[SqeDescriptor.LENGTH]);
        c.writeSqe(sqe, 0);
        MemorySegment sgl = SqeDescriptor.sgl1(sqe);
        return new SentCommand(SqeDescriptor.opcode(sqe), SqeDescriptor.nsid(sqe), SqeDescriptor.cdw23(sqe),
                SqeDescriptor.slba(sqe), SqeDescriptor.cdw(sqe, 12), SglDescriptor.address(sgl),
                SglDescriptor.keyedLength(sgl), SglDescriptor.key(sgl), tag);
    }
}
