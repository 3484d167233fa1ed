package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmException;
import io.rdmablock.rdma.verbs.emu.EmuCmId;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A memory-provider connection-manager id. Connect looks the listener up in {@link MemFabric} (none:
 * UNREACHABLE, as soft reports ECONNREFUSED), queues a passive id there and waits for accept or reject; accept links
 * the two queue pairs ({@link MemLink}) and moves both to RTS before the active side returns. An unanswered request
 * whose passive id is closed is rejected; a connect that times out makes a later accept fail CONNECT_ERROR.
 * DISCONNECTED is reported on both ids when the connection is torn down (either QP in ERROR, disconnect, close).
 */
final class MemCmId extends EmuCmId<MemQp> {
    private final MemVerbsProvider provider;
    private final MemCmId activePeer;
    /** Active side: the reply to its request (accept private data) or the CmException that ends it. */
    private final CompletableFuture<byte[]> reply = new CompletableFuture<>();

    /** Active id ({@code activePeer == null}) or the passive id of a connect request from {@code activePeer}. */
    MemCmId(MemVerbsProvider provider, MemCmId activePeer) {
        super(provider.device(), activePeer != null, MemQp::new);
        this.provider = provider;
        this.activePeer = activePeer;
    }

    /** A port of the fabric's (the same address: there is no route to find). */
    @Override
    protected InetSocketAddress localAddressFor(InetAddress addr, int port) {
        return new InetSocketAddress(addr, MemFabric.nextPort());
    }

    @Override
    public void connect(byte[] pd, long timeoutNs) {
        byte[] data = checkConnect(pd);
        MemCmListener l = MemFabric.lookup(remote);
        MemCmId request = new MemCmId(l == null ? provider : l.provider(), this);
        request.privateData = data;
        request.local = remote;
        request.remote = local;
        if (l == null || !l.offer(l.provider().track(request))) {
            if (l != null) {
                l.provider().untrack(request);
            }
            throw new CmException("rdma_connect failed: UNREACHABLE (no memory listener), remote=" + remote,
                    CmEventType.UNREACHABLE, null);
        }
        try {
            privateData = reply.get(Math.max(0, timeoutNs), TimeUnit.NANOSECONDS);
            connected = true;
        } catch (TimeoutException e) {
            CmException t = new CmException("rdma_connect timed out: timeoutNs=" + timeoutNs + ", remote=" + remote,
                    null, null);
            if (reply.completeExceptionally(t)) {
                throw t;
            }
            privateData = reply.join(); // accepted at the same moment
            connected = true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof CmException c) {
                throw c;
            }
            throw new CmException("rdma_connect failed: CONNECT_ERROR (" + e.getCause() + "), remote=" + remote,
                    CmEventType.CONNECT_ERROR, null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reply.completeExceptionally(new CmException("rdma_connect interrupted", null, null));
            throw new CmException("rdma_connect interrupted, remote=" + remote, null, null);
        }
    }

    /** Ends this (passive) request's wait at the active side with {@code e}. */
    void failRequest(CmException e) {
        activePeer.reply.completeExceptionally(e);
        closed = true;
        provider.untrack(this);
    }

    @Override
    public void accept(byte[] pd, long timeoutNs) {
        byte[] data = checkAccept(pd);
        MemQp mine = qp;
        MemQp theirs = activePeer.qp;
        if (theirs == null || theirs.isClosed()) {
            throw new CmException("rdma_accept failed: CONNECT_ERROR (active side destroyed its queue pair), remote="
                    + remote, CmEventType.CONNECT_ERROR, null);
        }
        MemLink link = new MemLink(theirs, mine);
        connected = true;
        if (!activePeer.reply.complete(data)) {
            link.breakLink();
            throw new CmException("rdma_accept failed: CONNECT_ERROR (the active side gave up), remote=" + remote,
                    CmEventType.CONNECT_ERROR, null);
        }
    }

    @Override
    public void reject(byte[] pd) {
        byte[] data = checkReject(pd);
        activePeer.reply.completeExceptionally(new CmException("rdma_connect: REJECTED by " + local,
                CmEventType.REJECTED, data));
        close();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (passive && !connected) {
            activePeer.reply.completeExceptionally(new CmException("rdma_connect: REJECTED by " + local
                    + " (request closed unanswered)", CmEventType.REJECTED, null));
        }
        MemQp q = qp;
        if (q != null) {
            q.close();
        }
        provider.untrack(this);
    }
}
