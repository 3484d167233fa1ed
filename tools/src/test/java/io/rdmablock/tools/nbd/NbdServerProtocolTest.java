package io.rdmablock.tools.nbd;

import static io.rdmablock.tools.nbd.NbdProtocol.*;
import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Raw-socket protocol tests: handshake options, C12 zero-length requests, bounds, unknown commands/flags, disconnects. */
@Timeout(60)
class NbdServerProtocolTest {
    static final long SIZE = 4 << 20;

    @TempDir
    Path dir;
    FileBlockDevice device;
    NbdServer server;

    @BeforeEach
    void start() throws IOException {
        Path f = dir.resolve("vol.img");
        FileBlockDevice.createFile(f, SIZE);
        device = new FileBlockDevice(f, 512, false, 4);
        server = new NbdServer(new NbdExport("vol1", "test volume", device, false, 1 << 20), "127.0.0.1:0", 8, 64 * 1024);
    }

    @AfterEach
    void stop() {
        server.close();
        device.close();
    }

    RawNbdClient connect() throws IOException {
        RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
        assertEquals(SIZE, c.go("vol1"));
        return c;
    }

    static ByteBuffer pattern(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return ByteBuffer.wrap(b);
    }

    @Test
    void shouldAnswerEioAndRefuseHandshakesOnceTheDeviceIsLost() throws IOException {
        try (RawNbdClient c = connect()) {
            device.close();
            c.request(0, CMD_READ, 1, 0, 4096);
            assertEquals(new RawNbdClient.Reply(EIO, 1), c.reply());
            c.request(0, CMD_FLUSH, 2, 0, 0);
            assertEquals(new RawNbdClient.Reply(EIO, 2), c.reply());
        }
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            c.option(OPT_GO, RawNbdClient.goData("vol1", INFO_BLOCK_SIZE));
            RawNbdClient.OptReply r = c.optionReply();
            assertEquals(REP_ERR_SHUTDOWN, r.type(), "GO after the device was lost");
        }
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            c.option(OPT_EXPORT_NAME, ByteBuffer.wrap("vol1".getBytes(StandardCharsets.UTF_8)));
            assertThrows(EOFException.class, () -> c.read(10), "EXPORT_NAME after the device was lost: closed");
        }
    }

    @Test
    void shouldAdvertiseFixedNewstyleAndNoZeroes() throws IOException {
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            assertEquals(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES, c.handshakeFlags);
        }
    }

    @Test
    void shouldAnswerUnknownOptionWithErrUnsupAndKeepNegotiating() throws IOException {
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            c.option(99, ByteBuffer.wrap(new byte[5]));
            RawNbdClient.OptReply r = c.optionReply();
            assertEquals(99, r.option());
            assertEquals(REP_ERR_UNSUP, r.type());
            c.option(OPT_STRUCTURED_REPLY, ByteBuffer.allocate(0));
            assertEquals(REP_ERR_UNSUP, c.optionReply().type());
            assertEquals(SIZE, c.go("vol1"));
        }
    }

    @Test
    void shouldListTheExport() throws IOException {
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            c.option(OPT_LIST, ByteBuffer.allocate(0));
            RawNbdClient.OptReply r = c.optionReply();
            assertEquals(REP_SERVER, r.type());
            int n = r.data().getInt();
            byte[] name = new byte[n];
            r.data().get(name);
            assertEquals("vol1", new String(name, StandardCharsets.UTF_8));
            assertEquals(REP_ACK, c.optionReply().type());
        }
    }

    @Test
    void shouldDescribeBlockSizesInInfo() throws IOException {
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            c.option(OPT_INFO, RawNbdClient.goData("", INFO_BLOCK_SIZE, INFO_NAME));
            boolean sawBlockSize = false;
            boolean sawName = false;
            RawNbdClient.OptReply r;
            while ((r = c.optionReply()).type() == REP_INFO) {
                switch (r.data().getShort()) {
                    case INFO_EXPORT -> {
                        assertEquals(SIZE, r.data().getLong());
                        int flags = r.data().getShort();
                        assertEquals(FLAG_CAN_MULTI_CONN, flags & FLAG_CAN_MULTI_CONN);
                        assertEquals(0, flags & FLAG_READ_ONLY);
                    }
                    case INFO_BLOCK_SIZE -> {
                        sawBlockSize = true;
                        assertEquals(512, r.data().getInt());
                        assertEquals(4096, r.data().getInt());
                        assertEquals(1 << 20, r.data().getInt());
                    }
                    case INFO_NAME -> sawName = true;
                    default -> fail("unexpected info");
                }
            }
            assertEquals(REP_ACK, r.type());
            assertTrue(sawBlockSize && sawName);
            // INFO does not end negotiation
            assertEquals(SIZE, c.go("vol1"));
        }
    }

    @Test
    void shouldRejectInfoForUnknownExport() throws IOException {
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            c.option(OPT_GO, RawNbdClient.goData("nope"));
            assertEquals(REP_ERR_UNKNOWN, c.optionReply().type());
        }
    }

    @Test
    void shouldAckAbort() throws IOException {
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            c.option(OPT_ABORT, ByteBuffer.allocate(0));
            assertEquals(REP_ACK, c.optionReply().type());
            assertThrows(EOFException.class, () -> c.read(1));
        }
    }

    @Test
    void shouldEnterTransmissionWithExportName() throws IOException {
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            c.option(OPT_EXPORT_NAME, ByteBuffer.wrap("vol1".getBytes(StandardCharsets.UTF_8)));
            ByteBuffer r = c.read(8 + 2 + 124);
            assertEquals(SIZE, r.getLong());
            c.request(0, CMD_READ, 7, 0, 512);
            assertEquals(new RawNbdClient.Reply(0, 7), c.reply());
            c.read(512);
        }
    }

    @Test
    void shouldCloseOnUnknownExportName() throws IOException {
        try (RawNbdClient c = new RawNbdClient(server.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            c.option(OPT_EXPORT_NAME, ByteBuffer.wrap("other".getBytes(StandardCharsets.UTF_8)));
            assertThrows(EOFException.class, () -> c.read(1));
        }
    }

    @Test
    void shouldRoundTripWritesAndReads() throws IOException {
        try (RawNbdClient c = connect()) {
            ByteBuffer data = pattern(8192, 1);
            c.request(CMD_FLAG_FUA, CMD_WRITE, 1, 4096, 8192);
            c.write(data.duplicate());
            assertEquals(new RawNbdClient.Reply(0, 1), c.reply());
            c.request(0, CMD_FLUSH, 2, 0, 0);
            assertEquals(new RawNbdClient.Reply(0, 2), c.reply());
            c.request(0, CMD_READ, 3, 4096, 8192);
            assertEquals(new RawNbdClient.Reply(0, 3), c.reply());
            assertEquals(data, c.read(8192));
        }
    }

    @Test
    void shouldServeLargeRequestsBeyondTheSlotBuffer() throws IOException {
        try (RawNbdClient c = connect()) {
            ByteBuffer data = pattern(1 << 20, 2);
            c.request(0, CMD_WRITE, 1, 0, 1 << 20);
            c.write(data.duplicate());
            assertEquals(0, c.reply().error());
            c.request(0, CMD_READ, 2, 0, 1 << 20);
            assertEquals(new RawNbdClient.Reply(0, 2), c.reply());
            assertEquals(data, c.read(1 << 20));
        }
    }

    @Test
    void shouldAnswerZeroLengthRequestsWithTheirCookieAtZeroAndAtSize() throws IOException {
        try (RawNbdClient c = connect()) {
            long cookie = 100;
            for (long offset : new long[] {0, SIZE}) {
                for (int type : new int[] {CMD_READ, CMD_WRITE, CMD_WRITE_ZEROES, CMD_TRIM}) {
                    c.request(0, type, cookie, offset, 0);
                    assertEquals(new RawNbdClient.Reply(0, cookie), c.reply(), "type=" + type + " offset=" + offset);
                    cookie++;
                }
            }
            c.request(0, CMD_READ, 1, 0, 512); // connection stays usable
            assertEquals(new RawNbdClient.Reply(0, 1), c.reply());
            c.read(512);
        }
    }

    @Test
    void shouldRejectRequestsPastTheEndAndKeepTheConnection() throws IOException {
        try (RawNbdClient c = connect()) {
            c.request(0, CMD_READ, 1, SIZE - 512, 1024);
            assertEquals(new RawNbdClient.Reply(EINVAL, 1), c.reply());
            c.request(0, CMD_WRITE, 2, SIZE, 512);
            c.write(pattern(512, 3));
            assertEquals(new RawNbdClient.Reply(ENOSPC, 2), c.reply());
            c.request(0, CMD_TRIM, 3, SIZE + 512, 512);
            assertEquals(new RawNbdClient.Reply(EINVAL, 3), c.reply());
            c.request(0, CMD_WRITE_ZEROES, 4, SIZE - 512, 1024);
            assertEquals(new RawNbdClient.Reply(ENOSPC, 4), c.reply());
            c.request(0, CMD_READ, 5, Long.MIN_VALUE, 512); // offset 2^63
            assertEquals(new RawNbdClient.Reply(EINVAL, 5), c.reply());
            c.request(0, CMD_READ, 6, -512L, 1024);         // offset + length wraps 2^64
            assertEquals(new RawNbdClient.Reply(EINVAL, 6), c.reply());
            c.request(0, CMD_READ, 7, SIZE - 512, 512);     // the last block still works
            assertEquals(new RawNbdClient.Reply(0, 7), c.reply());
            c.read(512);
        }
    }

    @Test
    void shouldRejectUnknownCommandsAndFlags() throws IOException {
        try (RawNbdClient c = connect()) {
            c.request(0, 99, 1, 0, 512);
            assertEquals(new RawNbdClient.Reply(EINVAL, 1), c.reply());
            c.request(0, CMD_BLOCK_STATUS, 2, 0, 512);
            assertEquals(new RawNbdClient.Reply(EINVAL, 2), c.reply());
            c.request(1 << 12, CMD_READ, 3, 0, 512);
            assertEquals(new RawNbdClient.Reply(EINVAL, 3), c.reply());
            c.request(CMD_FLAG_DF, CMD_READ, 4, 0, 512);
            assertEquals(new RawNbdClient.Reply(EINVAL, 4), c.reply());
            c.request(CMD_FLAG_NO_HOLE, CMD_WRITE, 5, 0, 512);
            c.write(pattern(512, 5));
            assertEquals(new RawNbdClient.Reply(EINVAL, 5), c.reply());
            c.request(CMD_FLAG_NO_HOLE | CMD_FLAG_FUA, CMD_WRITE_ZEROES, 6, 0, 512);
            assertEquals(new RawNbdClient.Reply(0, 6), c.reply());
        }
    }

    @Test
    void shouldRejectMisalignedAndOversizedRequests() throws IOException {
        try (RawNbdClient c = connect()) {
            c.request(0, CMD_READ, 1, 100, 512);
            assertEquals(new RawNbdClient.Reply(EINVAL, 1), c.reply());
            c.request(0, CMD_WRITE, 2, 0, 100);
            c.write(pattern(100, 2));
            assertEquals(new RawNbdClient.Reply(EINVAL, 2), c.reply());
            c.request(0, CMD_READ, 3, 0, (1 << 20) + 512);
            assertEquals(new RawNbdClient.Reply(EOVERFLOW, 3), c.reply());
            c.request(0, CMD_READ, 4, 0, 512);
            assertEquals(new RawNbdClient.Reply(0, 4), c.reply());
            c.read(512);
        }
    }

    @Test
    void shouldZeroWithWriteZeroes() throws IOException {
        try (RawNbdClient c = connect()) {
            c.request(0, CMD_WRITE, 1, 0, 4096);
            c.write(pattern(4096, 9));
            assertEquals(0, c.reply().error());
            c.request(0, CMD_WRITE_ZEROES, 2, 0, 4096);
            assertEquals(0, c.reply().error());
            c.request(0, CMD_READ, 3, 0, 4096);
            assertEquals(0, c.reply().error());
            assertEquals(ByteBuffer.allocate(4096), c.read(4096));
        }
    }

    @Test
    void shouldSurviveAClientThatDisconnectsMidRequest() throws IOException {
        try (RawNbdClient c = connect()) {
            c.request(0, CMD_WRITE, 1, 0, 4096);
            c.write(pattern(100, 1)); // header and part of the payload, then gone
        }
        try (RawNbdClient c = connect()) {
            c.request(0, CMD_READ, 1, 0, 64 * 1024); // and one that leaves while its reply is due
        }
        try (RawNbdClient c = connect()) {
            c.write(ByteBuffer.wrap(new byte[] {0x25, 0x60})); // half a header
        }
        try (RawNbdClient c = connect()) {
            c.request(0, CMD_READ, 42, 0, 512);
            assertEquals(new RawNbdClient.Reply(0, 42), c.reply());
            c.read(512);
        }
    }

    @Test
    void shouldShareWritesAcrossConnections() throws IOException {
        try (RawNbdClient a = connect(); RawNbdClient b = connect()) {
            ByteBuffer data = pattern(4096, 11);
            a.request(CMD_FLAG_FUA, CMD_WRITE, 1, 8192, 4096);
            a.write(data.duplicate());
            assertEquals(0, a.reply().error());
            b.request(0, CMD_READ, 2, 8192, 4096);
            assertEquals(new RawNbdClient.Reply(0, 2), b.reply());
            assertEquals(data, b.read(4096));
        }
    }

    @Test
    void shouldAnswerPipelinedRequestsBeyondTheSlotCount() throws IOException {
        try (RawNbdClient c = connect()) {
            int n = 100; // more than the 8 slots: the server must apply back pressure, not fail
            for (int i = 0; i < n; i++) {
                c.request(0, CMD_READ, i, (long) i * 4096, 4096);
            }
            boolean[] seen = new boolean[n];
            for (int i = 0; i < n; i++) {
                RawNbdClient.Reply r = c.reply();
                assertEquals(0, r.error());
                seen[(int) r.cookie()] = true;
                c.read(4096);
            }
            boolean[] all = new boolean[n];
            Arrays.fill(all, true);
            assertArrayEquals(all, seen);
        }
    }

    @Test
    void shouldCloseAfterDisc() throws IOException {
        try (RawNbdClient c = connect()) {
            c.request(0, CMD_DISC, 1, 0, 0);
            assertThrows(EOFException.class, () -> c.read(1));
        }
    }

    @Test
    void shouldRefuseWritesOnReadOnlyExport() throws IOException {
        try (NbdServer ro = new NbdServer(new NbdExport("ro", "", device, true, 1 << 20), "127.0.0.1:0", 4, 4096);
             RawNbdClient c = new RawNbdClient(ro.localAddress()).greet(FLAG_C_FIXED_NEWSTYLE)) {
            c.go("ro");
            c.request(0, CMD_WRITE, 1, 0, 512);
            c.write(pattern(512, 1));
            assertEquals(new RawNbdClient.Reply(EPERM, 1), c.reply());
            c.request(0, CMD_TRIM, 2, 0, 512);
            assertEquals(new RawNbdClient.Reply(EPERM, 2), c.reply());
        }
    }

    @Test
    void shouldParseListenAddresses() {
        assertEquals("127.0.0.1", ((java.net.InetSocketAddress) NbdServer.parseListen("10809")).getHostString());
        assertTrue(NbdServer.parseListen("unix:/tmp/x.sock") instanceof java.net.UnixDomainSocketAddress);
        assertEquals(10809, ((java.net.InetSocketAddress) NbdServer.parseListen("[::1]:10809")).getPort());
        assertThrows(IllegalArgumentException.class, () -> NbdServer.parseListen("nohost"));
        assertThrows(IllegalArgumentException.class, () -> NbdServer.parseListen("h:99999"));
    }
}
