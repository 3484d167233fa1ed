package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;

import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Raw-host helpers for tests outside this package (node process tests): one admin + one I/O queue. */
public final class NodeTestHost {
    private NodeTestHost() {
    }

    /** Writes 8 blocks of 512 bytes filled with {@code fill} at {@code slba}, reads them back; returns the read. */
    public static byte[] writeAndRead(InetSocketAddress target, String subnqn, long slba, int fill) {
        return run(target, subnqn, slba, fill, true);
    }

    /** Reads 8 blocks of 512 bytes at {@code slba}. */
    public static byte[] read(InetSocketAddress target, String subnqn, long slba) {
        return run(target, subnqn, slba, 0, false);
    }

    private static byte[] run(InetSocketAddress target, String subnqn, long slba, int fill, boolean write) {
        try (VerbsProvider p = Providers.select("soft");
             RawHost admin = RawHost.connect(p, target, 0, 32, 1 << 16)) {
            assertEquals(0, admin.fabricConnect(31, 0, subnqn, TargetFixture.HOSTNQN, 0xFFFF).status());
            assertEquals(0, admin.identify(Opcodes.CNS_CONTROLLER, 0).status());
            int cntlid = IdentifyControllerDescriptor.decode(admin.data()).cntlid();
            try (RawHost io = RawHost.connect(p, target, 1, 8, 1 << 16)) {
                assertEquals(0, io.fabricConnect(7, 0, subnqn, TargetFixture.HOSTNQN, cntlid).status());
                if (write) {
                    assertEquals(0, io.writeBlocks(1, slba, fill, 0).status());
                }
                assertEquals(0, io.readBlocks(0, 2, slba).status());
                return io.data().asSlice(8192, 4096).toArray(ValueLayout.JAVA_BYTE);
            }
        }
    }
}
