package io.rdmablock.tools.nbd;

import static io.rdmablock.tools.nbd.NbdProtocol.*;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fixed newstyle handshake (proto.md "Fixed newstyle negotiation", options EXPORT_NAME, ABORT, LIST, INFO, GO).
 *
 * <p>Unknown options, STARTTLS and STRUCTURED_REPLY are answered NBD_REP_ERR_UNSUP (the server speaks plain TCP and
 * simple replies only); malformed option data NBD_REP_ERR_INVALID; INFO/GO for another export name
 * NBD_REP_ERR_UNKNOWN. EXPORT_NAME for an unknown name ends the session, as the protocol requires. Unknown client
 * flags end the session. Option data longer than {@link NbdProtocol#MAX_OPTION_BYTES} ends the session.
 *
 * <p>The advertised size is re-read from the target at every INFO/GO/EXPORT_NAME (a resize shows on the next
 * connection). Once the device is lost ({@link io.rdmablock.initiator.BlockDevice#lossReason()}), INFO/GO are
 * answered NBD_REP_ERR_SHUTDOWN and EXPORT_NAME ends the session.
 */
final class NbdHandshake {
    /** Longest wait for the capacity refresh of a handshake. */
    static final long REFRESH_WAIT_MS = 5000;
    private static final Logger LOG = LoggerFactory.getLogger(NbdHandshake.class);

    /** Outcome: enter transmission, or the client left (ABORT, EOF, violation). */
    enum Outcome { TRANSMISSION, CLOSED }

    private final ByteChannel ch;
    private final NbdExport export;
    private final String peer;
    private boolean noZeroes;

    NbdHandshake(ByteChannel ch, NbdExport export, String peer) {
        this.ch = ch;
        this.export = export;
        this.peer = peer;
    }

    Outcome run() throws IOException {
        ByteBuffer hello = ByteBuffer.allocate(18);
        hello.putLong(NBDMAGIC).putLong(IHAVEOPT).putShort((short) (FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES)).flip();
        writeFully(hello);
        int clientFlags = readFully(4).getInt();
        if ((clientFlags & ~(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES)) != 0) {
            LOG.info("nbd {}: unknown client flags 0x{}: closing", peer, Integer.toHexString(clientFlags));
            return Outcome.CLOSED;
        }
        noZeroes = (clientFlags & FLAG_C_NO_ZEROES) != 0;
        while (true) {
            ByteBuffer h = readFully(16);
            long magic = h.getLong();
            int option = h.getInt();
            int length = h.getInt();
            if (magic != IHAVEOPT) {
                LOG.info("nbd {}: bad option magic 0x{}: closing", peer, Long.toHexString(magic));
                return Outcome.CLOSED;
            }
            if (length < 0 || length > MAX_OPTION_BYTES) {
                LOG.info("nbd {}: option {} data length {} exceeds {}: closing", peer, option,
                        Integer.toUnsignedString(length), MAX_OPTION_BYTES);
                return Outcome.CLOSED;
            }
            ByteBuffer data = readFully(length);
            switch (option) {
                case OPT_EXPORT_NAME -> {
                    String name = string(data, length);
                    if (!matches(name)) {
                        LOG.info("nbd {}: EXPORT_NAME '{}' unknown: closing", peer, name);
                        return Outcome.CLOSED;
                    }
                    String lost = export.device().lossReason();
                    if (lost != null) {
                        LOG.info("nbd {}: EXPORT_NAME refused, device lost ({}): closing", peer, lost);
                        return Outcome.CLOSED;
                    }
                    ByteBuffer r = ByteBuffer.allocate(noZeroes ? 10 : 134);
                    r.putLong(currentCapacity()).putShort((short) export.transmissionFlags());
                    r.position(r.capacity()).flip();
                    writeFully(r);
                    return Outcome.TRANSMISSION;
                }
                case OPT_ABORT -> {
                    replyQuietly(option);
                    return Outcome.CLOSED;
                }
                case OPT_LIST -> {
                    if (length != 0) {
                        reply(option, REP_ERR_INVALID, "LIST takes no data");
                    } else {
                        byte[] name = export.name().getBytes(StandardCharsets.UTF_8);
                        ByteBuffer d = ByteBuffer.allocate(4 + name.length).putInt(name.length).put(name).flip();
                        reply(option, REP_SERVER, d);
                        reply(option, REP_ACK, ByteBuffer.allocate(0));
                    }
                }
                case OPT_INFO, OPT_GO -> {
                    if (infoOrGo(option, data, length) && option == OPT_GO) {
                        return Outcome.TRANSMISSION;
                    }
                }
                default -> reply(option, REP_ERR_UNSUP, "option " + option + " not supported");
            }
        }
    }

    /** Returns true when the export was found and described (GO then enters transmission). */
    private boolean infoOrGo(int option, ByteBuffer data, int length) throws IOException {
        if (length < 6) {
            reply(option, REP_ERR_INVALID, "INFO/GO data shorter than 6 bytes");
            return false;
        }
        int nameLength = data.getInt();
        if (nameLength < 0 || nameLength > length - 6) {
            reply(option, REP_ERR_INVALID, "name length " + Integer.toUnsignedString(nameLength) + " exceeds option data");
            return false;
        }
        String name = string(data, nameLength);
        int requests = Short.toUnsignedInt(data.getShort());
        if (length != 4 + nameLength + 2 + 2 * requests) {
            reply(option, REP_ERR_INVALID, "INFO/GO data length " + length + " does not match " + requests + " requests");
            return false;
        }
        boolean wantName = false;
        boolean wantDescription = false;
        for (int i = 0; i < requests; i++) {
            int type = Short.toUnsignedInt(data.getShort());
            wantName |= type == INFO_NAME;
            wantDescription |= type == INFO_DESCRIPTION;
        }
        if (!matches(name)) {
            reply(option, REP_ERR_UNKNOWN, "unknown export '" + name + "'");
            return false;
        }
        String lost = export.device().lossReason();
        if (lost != null) {
            reply(option, REP_ERR_SHUTDOWN, "device lost: " + lost);
            return false;
        }
        ByteBuffer info = ByteBuffer.allocate(12);
        info.putShort((short) INFO_EXPORT).putLong(currentCapacity())
                .putShort((short) export.transmissionFlags()).flip();
        reply(option, REP_INFO, info);
        // block sizes are always sent: a client that did not ask still learns the alignment we enforce
        ByteBuffer bs = ByteBuffer.allocate(14);
        bs.putShort((short) INFO_BLOCK_SIZE).putInt(export.minBlockBytes()).putInt(export.preferredBlockBytes())
                .putInt(export.maxPayloadBytes()).flip();
        reply(option, REP_INFO, bs);
        if (wantName) {
            byte[] n = export.name().getBytes(StandardCharsets.UTF_8);
            reply(option, REP_INFO, ByteBuffer.allocate(2 + n.length).putShort((short) INFO_NAME).put(n).flip());
        }
        if (wantDescription) {
            byte[] d = export.description().getBytes(StandardCharsets.UTF_8);
            reply(option, REP_INFO, ByteBuffer.allocate(2 + d.length).putShort((short) INFO_DESCRIPTION).put(d).flip());
        }
        reply(option, REP_ACK, ByteBuffer.allocate(0));
        return true;
    }

    /**
     * The size to advertise: re-read from the target at every handshake (a volume may have been resized since the
     * last connection), waiting at most {@link #REFRESH_WAIT_MS}; the size known so far when that takes longer.
     */
    private long currentCapacity() {
        try {
            return export.device().refreshCapacity().get(REFRESH_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.debug("nbd {}: capacity refresh: {}", peer, e.toString());
        }
        return export.device().capacityBytes();
    }

    private boolean matches(String name) {
        return name.isEmpty() || name.equals(export.name());
    }

    private static String string(ByteBuffer data, int length) {
        byte[] b = new byte[length];
        data.get(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private void reply(int option, int type, String message) throws IOException {
        reply(option, type, ByteBuffer.wrap(message.getBytes(StandardCharsets.UTF_8)));
    }

    private void reply(int option, int type, ByteBuffer data) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(20);
        h.putLong(OPTION_REPLY_MAGIC).putInt(option).putInt(type).putInt(data.remaining()).flip();
        writeFully(h);
        writeFully(data);
    }

    private void replyQuietly(int option) {
        try {
            reply(option, REP_ACK, ByteBuffer.allocate(0));
        } catch (IOException e) {
            // the client may close right after ABORT without reading the ack (proto.md allows it)
        }
    }

    private ByteBuffer readFully(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new EOFException("client closed during handshake");
            }
        }
        return b.flip();
    }

    private void writeFully(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }
}
