package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmException;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.emu.EmuDevice;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A soft connection-manager id: one TCP connection, the {@link CmWire} handshake on it, then the queue pair's frames.
 * Connecting to a port nobody listens on fails with UNREACHABLE (ECONNREFUSED), as with iWARP; peer closed during the
 * handshake is CONNECT_ERROR; an unresolvable or unroutable address is ADDR_ERROR.
 */
final class SoftCmId implements CmId {
    private final SoftVerbsProvider provider;
    private final boolean passive;
    private final ArrayBlockingQueue<CmEventType> events = new ArrayBlockingQueue<>(16);
    private volatile SocketChannel channel;
    private InetSocketAddress remote;
    private InetSocketAddress local;
    private boolean resolved;
    private volatile boolean connected;
    private volatile SoftQp qp;
    private byte[] privateData = new byte[0];
    private int peerInitiatorDepth = 16;
    private int peerResponderResources = 16;
    private volatile boolean closed;

    /** Active id ({@code request == null}) or the passive id of a received connect request. */
    SoftCmId(SoftVerbsProvider provider, SocketChannel channel, CmWire.Msg request) {
        this.provider = provider;
        this.passive = request != null;
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

    @Override
    public void resolve(InetSocketAddress remoteAddress, long timeoutNs) {
        if (passive || connected) {
            throw new IllegalStateException("rdma_resolve_addr on a " + (passive ? "passive" : "connected") + " id");
        }
        InetAddress addr = remoteAddress.getAddress();
        if (addr == null) {
            try {
                addr = InetAddress.getByName(remoteAddress.getHostString());
            } catch (IOException e) {
                throw new CmException("rdma_resolve_addr failed: ADDR_ERROR, cannot resolve host="
                        + remoteAddress.getHostString(), CmEventType.ADDR_ERROR, null);
            }
        }
        if (addr.isAnyLocalAddress() || addr.isMulticastAddress()) {
            throw new CmException("rdma_resolve_addr failed: ADDR_ERROR, not a unicast address: " + addr,
                    CmEventType.ADDR_ERROR, null);
        }
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(addr, Math.max(1, remoteAddress.getPort())); // route lookup only, nothing is sent
            local = new InetSocketAddress(probe.getLocalAddress(), 0);
        } catch (IOException | RuntimeException e) {
            throw new CmException("rdma_resolve_addr failed: ADDR_ERROR, no route to " + addr + ": " + e,
                    CmEventType.ADDR_ERROR, null);
        }
        remote = new InetSocketAddress(addr, remoteAddress.getPort());
        resolved = true;
    }

    @Override
    public DeviceContext device() {
        if (!passive && !resolved) {
            throw new IllegalStateException("device is known after resolve (rdma_resolve_addr)");
        }
        return provider.device();
    }

    @Override
    public QueuePair createQp(QpInitAttr attr) {
        if (qp != null) {
            throw new IllegalStateException("id already has a queue pair, qpNum=" + qp.qpNum());
        }
        SoftQp q = new SoftQp((EmuDevice) device(), attr);
        q.onDisconnected(() -> events.offer(CmEventType.DISCONNECTED));
        qp = provider.track(q);
        return q;
    }

    @Override
    public QueuePair qp() {
        return qp;
    }

    private static void checkPrivateData(byte[] pd) {
        if (pd != null && pd.length > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("invalid privateData: length=" + pd.length + ", max="
                    + MAX_PRIVATE_DATA);
        }
    }

    @Override
    public void connect(byte[] pd, long timeoutNs) {
        checkPrivateData(pd);
        if (passive || !resolved || qp == null || connected || closed) {
            throw new IllegalStateException("rdma_connect needs an active, resolved id with a queue pair; passive="
                    + passive + ", resolved=" + resolved + ", qp=" + qp + ", connected=" + connected);
        }
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
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public void accept(byte[] pd, long timeoutNs) {
        checkPrivateData(pd);
        if (!passive || qp == null || connected || closed) {
            throw new IllegalStateException("rdma_accept needs a connect request with a queue pair; passive="
                    + passive + ", qp=" + qp + ", connected=" + connected);
        }
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
        checkPrivateData(pd);
        if (!passive || connected) {
            throw new IllegalStateException("rdma_reject needs an unanswered connect request");
        }
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

    @Override
    public CmEventType pollEvent(long timeoutNs) {
        try {
            return events.poll(Math.max(0, timeoutNs), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    @Override
    public void disconnect() {
        SoftQp q = qp;
        if (q != null && connected) {
            q.requestError();
        } else {
            closeQuietly(channel);
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
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
