package io.rdmablock.tools.nbd;

import static io.rdmablock.tools.nbd.NbdProtocol.FLAG_C_FIXED_NEWSTYLE;
import static io.rdmablock.tools.nbd.NbdProtocol.FLAG_C_NO_ZEROES;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.initiator.local.FileBlockDevice;
import io.rdmablock.testing.Await;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attack: an unauthenticated client opens NBD connections until the server runs out of threads and slot
 * buffers. Before the fix every connection was served. Now at most {@code maxConnections} are open; the next is
 * closed before the greeting and counted, and a slot freed by a closing client is usable again. Loopback only.
 */
@Timeout(60)
class NbdConnectionLimitTest {
    static final long SIZE = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void shouldRefuseConnectionsBeyondTheBoundAndServeAgainOnceOneCloses() throws IOException {
        Path f = dir.resolve("vol.img");
        FileBlockDevice.createFile(f, SIZE);
        try (FileBlockDevice device = new FileBlockDevice(f, 512, false, 2);
             NbdServer server = new NbdServer(new NbdExport("vol1", "test", device, false, 1 << 20), "127.0.0.1:0",
                     4, 64 * 1024, 2)) {
            RawNbdClient a = connect(server);
            try (RawNbdClient b = connect(server)) {
                assertEquals(2, server.openConnections());
                for (int i = 1; i <= 3; i++) {
                    try (RawNbdClient extra = new RawNbdClient(server.localAddress())) {
                        assertThrows(IOException.class, () -> extra.greet(FLAG_C_FIXED_NEWSTYLE),
                                "a connection beyond maxConnections=2 got the NBD greeting");
                    }
                    assertEquals(i, server.refusedCount());
                }
                assertEquals(2, server.openConnections());
                a.close();
                Await.until(() -> server.openConnections() <= 1, Duration.ofSeconds(10),
                        "the closed client's connection released");
                assertEquals(1, server.openConnections(), "the closed client's connection was not released");
                try (RawNbdClient c = connect(server)) {
                    assertEquals(2, server.openConnections());
                }
            }
            assertEquals(3, server.refusedCount());
        }
    }

    @Test
    void shouldCloseAConnectionThatNeverFinishesItsHandshake() throws IOException {
        Path f = dir.resolve("vol3.img");
        FileBlockDevice.createFile(f, SIZE);
        try (FileBlockDevice device = new FileBlockDevice(f, 512, false, 2);
             NbdServer server = new NbdServer(new NbdExport("vol1", "test", device, false, 1 << 20), "127.0.0.1:0",
                     4, 64 * 1024, 1, 300)) {
            try (RawNbdClient silent = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
                // sends no option: holds the only connection until the handshake timeout closes it
                Await.until(() -> server.openConnections() == 0, Duration.ofSeconds(10),
                        "the silent client's connection closed by the 300 ms handshake timeout");
            }
            try (RawNbdClient c = connect(server)) {
                assertEquals(1, server.openConnections());
            }
        }
    }

    @Test
    void shouldRejectABoundOutOfRange() throws IOException {
        Path f = dir.resolve("vol2.img");
        FileBlockDevice.createFile(f, SIZE);
        try (FileBlockDevice device = new FileBlockDevice(f, 512, false, 2)) {
            NbdExport e = new NbdExport("vol1", "test", device, false, 1 << 20);
            assertThrows(IllegalArgumentException.class, () -> new NbdServer(e, "127.0.0.1:0", 4, 64 * 1024, 0));
        }
    }

    @Test
    void shouldCallEveryNonLoopbackTcpAddressExposed() {
        assertTrue(NbdServer.exposed(NbdServer.parseListen("0.0.0.0:10809")));
        assertTrue(NbdServer.exposed(NbdServer.parseListen("[::]:10809")));
        assertTrue(NbdServer.exposed(NbdServer.parseListen("192.0.2.7:10809")));
        assertFalse(NbdServer.exposed(NbdServer.parseListen("127.0.0.1:10809")));
        assertFalse(NbdServer.exposed(NbdServer.parseListen("[::1]:10809")));
        assertFalse(NbdServer.exposed(NbdServer.parseListen("10809")));
        assertFalse(NbdServer.exposed(NbdServer.parseListen("unix:/tmp/nbd.sock")));
    }

    private static RawNbdClient connect(NbdServer server) throws IOException {
        RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
        assertEquals(SIZE, c.go("vol1"));
        return c;
    }
}
