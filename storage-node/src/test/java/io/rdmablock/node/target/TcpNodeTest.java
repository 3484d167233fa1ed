package io.rdmablock.node.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmablock.node.NodeConfig;
import io.rdmablock.node.StorageNode;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A storage node with {@code --tcp-listen} ({@link StorageNode#withTcpListen}): a TCP host writes and reads back. */
@Timeout(60)
class TcpNodeTest {
    @TempDir
    Path dir;

    @Test
    void aNodeServesNvmeTcpBesideRdmaAndStopsListeningWhenClosed() throws IOException {
        InetSocketAddress tcp;
        try (StorageNode node = new StorageNode(NodeConfig.local(dir).withCreateVolumes(List.of("vol-t:16M:4096:*")))
                .withTcpListen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            tcp = node.tcpAddress();
            assertNotNull(tcp);
            String subnqn = Subsystem.nqnFor("vol-t");
            try (TcpTestHost a = new TcpTestHost(tcp); TcpTestHost io = new TcpTestHost(tcp)) {
                a.icReq(false, true);
                assertEquals(0, a.connect(0, 31, subnqn, TargetFixture.HOSTNQN, 0xFFFF));
                MemorySegment id = a.identifyController();
                assertEquals(0, CqeDescriptor.status(a.cqe));
                io.icReq(false, true);
                assertEquals(0, io.connect(1, 31, subnqn, TargetFixture.HOSTNQN,
                        IdentifyControllerDescriptor.decode(id).cntlid()));
                MemorySegment data = io.arena.allocate(64 * 1024);
                for (int i = 0; i < 64 * 1024; i++) {
                    data.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
                }
                assertEquals(0, io.write(10, 4096, data, false, 0));
                MemorySegment back = io.arena.allocate(64 * 1024);
                assertEquals(0, io.read(10, 4096, back));
                assertEquals(-1, back.mismatch(data));
            }
        }
        assertThrows(IOException.class, () -> new TcpTestHost(tcp).close(), "the listener is closed with the node");
    }
}
