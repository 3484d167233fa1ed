package io.rdmablock.rdma.verbs.emu;

import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmException;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QueuePair;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * The connection-manager id of both emulated providers, less the transport's handshake: its state (passive or
 * active, resolved, connected, closed), addresses, private data, events (DISCONNECTED when the queue pair's
 * connection is torn down), the address checks of resolve and the queue pair it makes. The transport (soft: TCP and
 * its {@code CmWire} handshake; memory: the in-process fabric) implements connect, accept, reject, disconnect and
 * close. Shared implementation of the emulated providers, not an API for users. Control path only.
 *
 * @param <Q> the transport's queue pair
 */
public abstract class EmuCmId<Q extends EmuQp> implements CmId {
    protected final EmuDevice device;
    protected final boolean passive;
    private final ArrayBlockingQueue<CmEventType> events = new ArrayBlockingQueue<>(16);
    protected InetSocketAddress remote;
    protected InetSocketAddress local;
    protected boolean resolved;
    protected volatile boolean connected;
    protected volatile Q qp;
    protected volatile byte[] privateData = new byte[0];
    protected volatile boolean closed;

    private final BiFunction<EmuDevice, QpInitAttr, Q> newQp;

    /** @param newQp makes the transport's queue pair on a device (creation checks included) */
    protected EmuCmId(EmuDevice device, boolean passive, BiFunction<EmuDevice, QpInitAttr, Q> newQp) {
        this.device = device;
        this.passive = passive;
        this.newQp = newQp;
    }

    /**
     * The local address of a connection to {@code addr} on {@code port}, which resolve found to be a unicast address
     * (soft: the route's source address; memory: the fabric's next port); a failure throws ADDR_ERROR.
     */
    protected abstract InetSocketAddress localAddressFor(InetAddress addr, int port);

    /**
     * {@code rdma_resolve_addr}: an active, unconnected id; the host resolved (else ADDR_ERROR); a unicast address
     * (else ADDR_ERROR); the transport's local address for it.
     */
    @Override
    public final void resolve(InetSocketAddress remoteAddress, long timeoutNs) {
        InetAddress addr = resolveUnicast(remoteAddress);
        local = localAddressFor(addr, remoteAddress.getPort());
        remote = new InetSocketAddress(addr, remoteAddress.getPort());
        resolved = true;
    }

    private InetAddress resolveUnicast(InetSocketAddress remoteAddress) {
        if (passive || connected) {
            throw new IllegalStateException("rdma_resolve_addr on a " + (passive ? "passive" : "connected") + " id");
        }
        InetAddress addr = remoteAddress.getAddress();
        if (addr == null) {
            try {
                addr = InetAddress.getByName(remoteAddress.getHostString());
            } catch (UnknownHostException e) {
                throw new CmException("rdma_resolve_addr failed: ADDR_ERROR, cannot resolve host="
                        + remoteAddress.getHostString(), CmEventType.ADDR_ERROR, null);
            }
        }
        if (addr.isAnyLocalAddress() || addr.isMulticastAddress()) {
            throw new CmException("rdma_resolve_addr failed: ADDR_ERROR, not a unicast address: " + addr,
                    CmEventType.ADDR_ERROR, null);
        }
        return addr;
    }

    @Override
    public final DeviceContext device() {
        if (!passive && !resolved) {
            throw new IllegalStateException("device is known after resolve (rdma_resolve_addr)");
        }
        return device;
    }

    @Override
    public final QueuePair createQp(QpInitAttr attr) {
        if (qp != null) {
            throw new IllegalStateException("id already has a queue pair, qpNum=" + qp.qpNum());
        }
        device();
        Q q = newQp.apply(device, attr);
        q.onDisconnected(() -> events.offer(CmEventType.DISCONNECTED));
        qp = device.resources().track(q);
        return q;
    }

    @Override
    public final QueuePair qp() {
        return qp;
    }

    /** The checks of {@code rdma_connect}: private data, an active resolved id with a queue pair; the data's copy. */
    protected final byte[] checkConnect(byte[] pd) {
        byte[] data = checkPrivateData(pd);
        if (passive || !resolved || qp == null || connected || closed) {
            throw new IllegalStateException("rdma_connect needs an active, resolved id with a queue pair; passive="
                    + passive + ", resolved=" + resolved + ", qp=" + qp + ", connected=" + connected);
        }
        return data;
    }

    /** The checks of {@code rdma_accept}: private data, a connect request with a queue pair; the data's copy. */
    protected final byte[] checkAccept(byte[] pd) {
        byte[] data = checkPrivateData(pd);
        if (!passive || qp == null || connected || closed) {
            throw new IllegalStateException("rdma_accept needs a connect request with a queue pair; passive="
                    + passive + ", qp=" + qp + ", connected=" + connected);
        }
        return data;
    }

    /** The checks of {@code rdma_reject}: private data, an unanswered connect request; the data's copy. */
    protected final byte[] checkReject(byte[] pd) {
        byte[] data = checkPrivateData(pd);
        if (!passive || connected) {
            throw new IllegalStateException("rdma_reject needs an unanswered connect request");
        }
        return data;
    }

    /** Checks the length of private data to send ({@link #MAX_PRIVATE_DATA}); returns a copy (empty for null). */
    private static byte[] checkPrivateData(byte[] pd) {
        if (pd != null && pd.length > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("invalid privateData: length=" + pd.length + ", max="
                    + MAX_PRIVATE_DATA);
        }
        return pd == null ? new byte[0] : pd.clone();
    }

    /**
     * {@code rdma_disconnect}: a connected queue pair goes to ERROR, which tears the connection down (DISCONNECTED on
     * both ids); otherwise the transport drops what it has ({@link #disconnectUnconnected}).
     */
    @Override
    public final void disconnect() {
        Q q = qp;
        if (q != null && connected) {
            q.requestError();
        } else {
            disconnectUnconnected();
        }
    }

    /** {@link #disconnect} of an id without an established connection: nothing, unless the transport has a socket. */
    protected void disconnectUnconnected() {
    }

    @Override
    public final byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public final CmEventType pollEvent(long timeoutNs) {
        try {
            return events.poll(Math.max(0, timeoutNs), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    @Override
    public final InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public final InetSocketAddress remoteAddress() {
        return remote;
    }
}
