package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.state.ClusterState;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeQos;
import io.rdmablock.mgmt.client.VolumeState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * A volume's settings that change without touching its data or copies: who may connect ({@code allowedHosts}),
 * whether hosts must authenticate ({@code requireAuth}) and its limits ({@code qos}, docs/qos.md), each by
 * compare-and-set on the record; nodes apply them at their next heartbeat (docs/authentication.md, "Who may connect: allow-lists"). Thread-safe (the store is).
 */
final class VolumeSettings {
    private static final Logger LOG = LoggerFactory.getLogger(VolumeSettings.class);
    private final ClusterState s;
    private final Function<VolumeRecord, Volume> toVolume;

    VolumeSettings(ClusterState s, Function<VolumeRecord, Volume> toVolume) {
        this.s = s;
        this.toVolume = toVolume;
    }

    /** Logs a volume that admits any host (WARN) or none yet (INFO): both are the operator's explicit choice. */
    static void warnAboutHosts(String name, List<String> hosts) {
        if (hosts.contains(Limits.ANY_HOST)) {
            LOG.warn("volume {} admits any host (allowedHosts [\"*\"]): any machine that reaches a node's fabric "
                    + "port can connect, read and write it; name its hosts instead", name);
        } else if (hosts.isEmpty()) {
            LOG.info("volume {} admits no host yet (allowedHosts empty): set them with PATCH /v1/volumes/{} "
                    + "{{\"allowedHosts\": [...]}} (rdmablock volume set-hosts)", name, name);
        }
    }

    /**
     * Replaces a volume's allow-list (compare-and-set); nodes apply it at their next heartbeat, to Connects after it
     * (connected hosts stay). Errors: 400 (an entry, see {@link Limits#checkAllowedHosts}), 404, 409 deleting. The
     * same list changes nothing.
     */
    Volume allowedHosts(String name, List<String> hosts) {
        ApiException.check(() -> Limits.checkName("name", name));
        ApiException.check(() -> Limits.checkAllowedHosts(hosts));
        return changeVolume(name, "setting allowedHosts", v -> {
            if (Set.copyOf(v.allowedHosts()).equals(Set.copyOf(hosts))) {
                return null;
            }
            LOG.info("volume {} allowed hosts: {} -> {}", name, v.allowedHosts(), hosts);
            warnAboutHosts(name, hosts);
            return v.withAllowedHosts(hosts);
        });
    }

    /**
     * Changes a volume that is not being deleted by compare-and-set, trying again on contention: {@code change} gives
     * the next record, or null when there is nothing to change. Errors: 404, 409 deleting, 503 contention.
     */
    private Volume changeVolume(String name, String what, java.util.function.UnaryOperator<VolumeRecord> change) {
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            Versioned<VolumeRecord> current = s.store.volumeVersioned(name)
                    .orElseThrow(() -> ApiException.volumeNotFound(name));
            VolumeRecord v = current.value();
            if (v.state() == VolumeState.DELETING) {
                throw ClusterState.deleting(v);
            }
            VolumeRecord next = change.apply(v);
            if (next == null) {
                return toVolume.apply(v);
            }
            if (s.compareAndSet(current, next)) {
                return toVolume.apply(next);
            }
        }
        throw ClusterState.contention(name, what);
    }

    /**
     * Replaces a volume's limits (compare-and-set; docs/qos.md): every field not given is 0 (no limit), {@link
     * VolumeQos#NONE} lifts them all. Every copy's node gets them at its next heartbeat; the primary enforces them
     * from then on (within about 1 s), a promoted copy too. Errors: 400 (a bound, {@link VolumeQos#check()}, naming
     * the field; nothing changes), 404, 409 deleting. The same limits change nothing.
     */
    Volume qos(String name, VolumeQos limits) {
        ApiException.check(() -> Limits.checkName("name", name));
        VolumeQos q = limits == null ? VolumeQos.NONE : limits;
        ApiException.check(q::check);
        return changeVolume(name, "setting qos", v -> {
            if (v.qos().equals(q)) {
                return null;
            }
            LOG.info("volume {} limits: {} -> {}", name, v.qos(), q);
            return v.withQos(q);
        });
    }

    /**
     * Switches a volume's requireAuth (compare-and-set). Errors: 404, 409 deleting. The same value changes nothing.
     */
    Volume requireAuth(String name, boolean on) {
        ApiException.check(() -> Limits.checkName("name", name));
        return changeVolume(name, "setting requireAuth to " + on, v -> v.requireAuth() == on ? null
                : v.withRequireAuth(on));
    }
}
