package io.rdmablock.node.replication;

import io.rdmablock.nvmf.host.PeerAssociation;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.function.Supplier;

/**
 * The association a primary keeps to a secondary only for its peer lease (docs/failover.md, "Peer lease" and "a
 * secondary's report") and its copy snapshot commands (docs/snapshots.md), used when no host queue's association is
 * open: without it, a primary whose hosts are
 * reconnecting (or that no host uses) renews nothing, its secondaries report it silent, and a primary cut only from
 * the management plane would be failed over although it reaches its peers. One admin queue and one I/O queue of two
 * entries, in a protection domain of its own on the device that routes to the secondary; made on the first renewal
 * that needs it, one connection attempt bounded by the set-up timeout, dropped on any failure and made again at the
 * next renewal. Link thread only.
 */
final class LeaseAssociation implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseAssociation.class);

    private final VerbsProvider provider;
    private final String subnqn;
    private final String hostnqn;
    private final Supplier<PeerLink.Secrets> secrets;
    private CmId route;
    private ProtectionDomain pd;
    private PeerAssociation association;
    private boolean failureLogged;

    LeaseAssociation(VerbsProvider provider, String subnqn, String hostnqn, Supplier<PeerLink.Secrets> secrets) {
        this.provider = provider;
        this.subnqn = subnqn;
        this.hostnqn = hostnqn;
        this.secrets = secrets;
    }

    /**
     * Asks the secondary at {@code address} for a peer lease on this association, connecting it first when needed.
     *
     * @return the lease granted, ms; 0 when refused or when the association could not be made or failed
     */
    long renew(InetSocketAddress address, long epoch, long leaseMs, long setupTimeoutNs, int katoMs) {
        try {
            connected(address, setupTimeoutNs, katoMs);
            return association.peerLease(epoch, leaseMs);
        } catch (RuntimeException e) {
            if (!failureLogged) {
                failureLogged = true;
                LOG.info("peer lease association to {} ({}) failed, made again at the next renewal: {}", address,
                        subnqn, e.toString());
            }
            close();
            return 0;
        }
    }

    /**
     * A copy snapshot command ({@link PeerAssociation#copySnapshot}) on this association, connecting it first when
     * needed; the association is dropped when it fails.
     *
     * @return the answer's NVMe status
     * @throws RuntimeException when the association could not be made or the command got no answer
     */
    int copySnapshot(InetSocketAddress address, long epoch, long snapshotId, int action, long setupTimeoutNs,
                     long timeoutNs, int katoMs) {
        try {
            connected(address, setupTimeoutNs, katoMs);
            return association.copySnapshot(epoch, snapshotId, action, timeoutNs);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Makes the association when there is none (link thread). */
    private void connected(InetSocketAddress address, long setupTimeoutNs, int katoMs) {
        if (association == null) {
            route = provider.createId();
            route.resolve(address, setupTimeoutNs);
            pd = route.device().allocPd();
            PeerLink.Secrets k = secrets.get();
            byte[] hostId = PeerAssociation.hostId(hostnqn + "/" + subnqn + "/lease/" + System.nanoTime());
            association = PeerAssociation.connect(provider, pd, new PeerAssociation.Params(address, subnqn,
                    hostnqn, 1, 2, katoMs, setupTimeoutNs, k.host(), k.ctrl()), hostId);
            failureLogged = false;
        }
    }

    /** Keeps the association alive between renewals (they are admin commands too); drops it when that fails. */
    void keepAlive() {
        if (association == null) {
            return;
        }
        try {
            association.keepAlive();
        } catch (RuntimeException e) {
            close();
        }
    }

    @Override
    public void close() {
        PeerLink.closeQuietly(association);
        PeerLink.closeQuietly(pd);
        PeerLink.closeQuietly(route);
        association = null;
        pd = null;
        route = null;
    }
}
