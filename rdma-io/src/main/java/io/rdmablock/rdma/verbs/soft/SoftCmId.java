package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmException;
import io.rdmablock.rdma.verbs.emu.EmuCmId;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeoutException;

/**
 * A soft connection-manager id: one TCP connection, the {@link CmWire} handshake on it, then the queue pair's frames.
 * Connecting to a port nobody listens on fails with UNREACHABLE (ECONNREFUSED), as with iWARP; peer closed during the
 * handshake is CONNECT_ERROR; an unresolvable or unroutable address is ADDR_ERROR.
 */
final class SoftCmId extends EmuCmId<SoftQp> {
    private final SoftVerbsProvider provider;
    private volatile SocketChannel channel;
    private int peerInitiatorDepth = 16;
    private int peerResponderResources = 16;

    /** Active id ({@code request == null}) or the passive id of a received connect request. */
    SoftCmId(SoftVerbsProvider provider, SocketChannel channel, CmWire.Msg request) {
        super(provider.device(), request != null, SoftQp::new);
        this.provider = provider;
        this.channel = channel;
        if (request != null) {
            privateData = request.privateData();
            peerInitiatorDepth = request.initiatorDepth();
            peerResponderResources = request.responderResources();
            try {
                remote = (InetSocketAddress) channel.getRemoteAddress();
                local = (InetSocketAddress) channel.getLocalAddress();
            } catch (IOException ignored) {
                // addresses stay null; the connection is probably gone and accept will say so
            }
        }
    }

    /** The source address of the route to {@code addr} (port 0 until connected); no route: ADDR_ERROR. */
    @Override
    protected InetSocketAddress localAddressFor(InetAddress addr, int port) {
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(addr, Math.max(1, port)); // route lookup only, nothing is sent
            return new InetSocketAddress(probe.getLocalAddress(), 0);
        } catch (IOException | RuntimeException e) {
            throw new CmException("rdma_resolve_addr failed: ADDR_ERROR, no route to " + addr + ": " + e,
                    CmEventType.ADDR_ERROR, null);
        }
    }

    @Override
    public void connect(byte[] pd, long timeoutNs) {
        checkConnect(pd);
        long deadline = System.nanoTime() + timeoutNs;
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open();
            channel = ch;
            CmWire.configure(ch);
            CmWire.connect(ch, remote, deadline);
            SoftQp q = qp;
            CmWire.writeFully(ch, CmWire.encode(CmWire.REQ, q.qpNum(), q.attr().initiatorDepth,
                    q.attr().responderResources, pd), deadline);
            CmWire.Msg reply = CmWire.read(ch, deadline);
            if (reply.type() == CmWire.REJECT) {
                closeQuietly(ch);
                throw new CmException("rdma_connect: REJECTED by " + remote, CmEventType.REJECTED,
                        reply.privateData());
            }
            if (reply.type() != CmWire.ACCEPT) {
                throw new IOException("unexpected handshake message type=" + reply.type());
            }
            privateData = reply.privateData();
            peerInitiatorDepth = reply.initiatorDepth();
            peerResponderResources = reply.responderResources();
            CmWire.writeFully(ch, CmWire.encode(CmWire.RTU, q.qpNum(), 0, 0, null), deadline);
            local = (InetSocketAddress) ch.getLocalAddress();
            connected = true;
            q.establish(ch, peerResponderResources);
        } catch (ConnectException e) {
            closeQuietly(ch);
            throw new CmException("rdma_connect failed: UNREACHABLE (ECONNREFUSED), remote=" + remote,
                    CmEventType.UNREACHABLE, null);
        } catch (TimeoutException e) {
            closeQuietly(ch);
            throw new CmException("rdma_connect timed out: timeoutNs=" + timeoutNs + ", remote=" + remote, null, null);
        } catch (EOFException e) {
            closeQuietly(ch);
            throw new CmException("rdma_connect failed: CONNECT_ERROR (peer closed during handshake), remote="
                    + remote, CmEventType.CONNECT_ERROR, null);
        } catch (IOException e) {
            closeQuietly(ch);
            CmEventType ev = ch != null && ch.isConnectionPending() ? CmEventType.UNREACHABLE
                    : CmEventType.CONNECT_ERROR;
            throw new CmException("rdma_connect failed: " + ev + " (" + e.getMessage() + "), remote=" + remote,
                    ev, null);
        }
    }

    @Override
    public void accept(byte[] pd, long timeoutNs) {
        checkAccept(pd);
        long deadline = System.nanoTime() + timeoutNs;
        SocketChannel ch = channel;
        SoftQp q = qp;
        try {
            CmWire.writeFully(ch, CmWire.encode(CmWire.ACCEPT, q.qpNum(), q.attr().initiatorDepth,
                    q.attr().responderResources, pd), deadline);
            CmWire.Msg rtu = CmWire.read(ch, deadline);
            if (rtu.type() != CmWire.RTU) {
                throw new IOException("unexpected handshake message type=" + rtu.type());
            }
            connected = true;
            q.establish(ch, peerResponderResources);
        } catch (TimeoutException e) {
            closeQuietly(ch);
            throw new CmException("rdma_accept timed out: timeoutNs=" + timeoutNs + ", remote=" + remote, null, null);
        } catch (IOException e) {
            closeQuietly(ch);
            throw new CmException("rdma_accept failed: CONNECT_ERROR (" + e.getMessage() + "), remote=" + remote,
                    CmEventType.CONNECT_ERROR, null);
        }
    }

    @Override
    public void reject(byte[] pd) {
        checkReject(pd);
        SocketChannel ch = channel;
        if (ch != null && ch.isOpen()) {
            try {
                CmWire.writeFully(ch, CmWire.encode(CmWire.REJECT, 0, 0, 0, pd), System.nanoTime() + 1_000_000_000L);
                ch.shutdownOutput();
            } catch (IOException | TimeoutException ignored) {
                // the peer is gone; nothing to tell it
            }
        }
        close();
    }

    /** Closes the socket of a connection not established yet (a handshake in progress fails). */
    @Override
    protected void disconnectUnconnected() {
        closeQuietly(channel);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (passive && !connected && channel != null && channel.isOpen()) {
            closed = true; // reject below must not recurse into close
            try {
                CmWire.writeFully(channel, CmWire.encode(CmWire.REJECT, 0, 0, 0, null),
                        System.nanoTime() + 100_000_000L);
            } catch (IOException | TimeoutException ignored) {
                // best effort
            }
        }
        closed = true;
        SoftQp q = qp;
        if (q != null) {
            q.close();
        }
        if (q == null || !connected) {
            closeQuietly(channel);
        }
        provider.untrack(this);
    }

    private static void closeQuietly(SocketChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }
}
