package io.rdmablock.e2e;

import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.MgmtUnavailableException;
import io.rdmablock.mgmt.client.ProblemTypes;

import java.util.concurrent.TimeUnit;

/**
 * The {@code mgmt-leader-kill} fault of {@link FailoverCampaign} (docs/chaos.md): kill -9 of the leader management
 * server of a {@link CampaignMgmtPlane}, then, bounded by {@value #BOUND_S} s, (a) a volume create through the URL
 * list ({@link MgmtClient} fails over and follows a follower's 307) until one is answered, and (b) {@code GET
 * /v1/leader} on the survivors until they name another leader; the killed server is started again after the hold.
 * Servers without leader election ({@code /v1/leader} 404: every one of them sweeps, etcd's CAS keeps that safe)
 * still make it a meaningful fault: the server the clients use is killed, and no election time is reported. A 409
 * no-capacity / insufficient-nodes answer counts as not yet (the answering server has not seen the nodes' heartbeats,
 * which fail over to it, within its node timeout); any other error fails the fault.
 */
final class MgmtLeaderFault {
    /** Bound of the create (and of the wait for a new leader) after the kill, s. */
    static final int BOUND_S = 30;
    private static final long PROBE_BYTES = 1L << 20;

    /**
     * What one fault saw.
     *
     * @param victim   index of the killed server
     * @param leader   true when the victim was the leader {@code /v1/leader} named (false: the server in use)
     * @param createMs from the kill to the first create answered (201, or 409 volume-exists for a create whose
     *                 first answer was lost), ms; -1 when none within the bound
     * @param electMs  from the kill to a live server naming another leader, ms; -1 when none did (within the bound,
     *                 or the servers do not report one)
     * @param detail   what failed last while waiting, or ""
     */
    record Result(int victim, boolean leader, long createMs, long electMs, String detail) {
        boolean ok(boolean electionReported) {
            return createMs >= 0 && (!electionReported || electMs >= 0);
        }

        String describe(String victimUrl) {
            return "kill -9 of " + (leader ? "the leader" : "the management server in use (no /v1/leader)") + " "
                    + victimUrl + "; create through the URL list "
                    + (createMs >= 0 ? "answered after " + createMs + " ms" : "NOT ANSWERED within " + BOUND_S + " s")
                    + (leader ? ", new leader " + (electMs >= 0 ? "after " + electMs + " ms"
                    : "NOT ELECTED within " + BOUND_S + " s") : "")
                    + (detail.isEmpty() || createMs >= 0 ? "" : " (last: " + detail + ")");
        }
    }

    private MgmtLeaderFault() {
    }

    /**
     * Runs the fault; the volume it creates is deleted again.
     *
     * @param plane  the management plane (the victim is started again before this returns)
     * @param client a client of every URL of the plane
     * @param name   the probe volume's name
     * @param holdMs how long the victim stays down at least, ms
     */
    static Result inject(CampaignMgmtPlane plane, MgmtClient client, String name, long holdMs)
            throws Exception {
        int leader = plane.leaderIndex();
        int victim = leader >= 0 ? leader : plane.urls().indexOf(client.baseUri().toString());
        if (victim < 0) {
            victim = 0;
        }
        long t0 = System.nanoTime();
        plane.kill(victim);
        long deadline = t0 + TimeUnit.SECONDS.toNanos(BOUND_S);
        long createMs = -1;
        long electMs = -1;
        String last = "";
        while (System.nanoTime() < deadline && (createMs < 0 || (leader >= 0 && electMs < 0))) {
            if (leader >= 0 && electMs < 0) {
                int now = plane.leaderIndex();
                if (now >= 0 && now != victim) {
                    electMs = (System.nanoTime() - t0) / 1_000_000;
                }
            }
            if (createMs < 0) {
                try {
                    client.createVolume(CreateVolumeRequest.of(name, PROBE_BYTES).withAnyHost());
                    createMs = (System.nanoTime() - t0) / 1_000_000;
                } catch (MgmtException e) {
                    if (e.status() == 409 && ProblemTypes.VOLUME_EXISTS.equals(e.type())) {
                        createMs = (System.nanoTime() - t0) / 1_000_000;
                    } else if (e.status() == 409 && (ProblemTypes.NO_CAPACITY.equals(e.type())
                            || ProblemTypes.INSUFFICIENT_NODES.equals(e.type()))) {
                        // the server that answers now has not had the nodes' heartbeats yet: they fail over to it
                        last = e.getMessage();
                    } else if (e.status() != 503) {
                        throw e; // not an outage: a bug the campaign must report
                    } else {
                        last = e.getMessage();
                    }
                } catch (MgmtUnavailableException e) {
                    last = e.getMessage();
                }
            }
            if (createMs < 0 || (leader >= 0 && electMs < 0)) {
                Thread.sleep(100); // probe pacing while the outage is measured (ends with the hold, not a condition)
            }
        }
        if (createMs >= 0) {
            try {
                client.deleteVolume(name, true);
            } catch (RuntimeException e) {
                // room is ample; a probe volume left behind is harmless
            }
        }
        long left = holdMs - (System.nanoTime() - t0) / 1_000_000;
        if (left > 0) {
            Thread.sleep(left); // the fault's hold time: the scenario
        }
        plane.start(victim);
        plane.awaitHealthy(victim, CampaignMgmtPlane.START_S);
        return new Result(victim, leader >= 0, createMs, electMs, last);
    }
}
