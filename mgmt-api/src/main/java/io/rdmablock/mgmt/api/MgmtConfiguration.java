package io.rdmablock.mgmt.api;

import java.util.List;
import java.util.function.Function;

/**
 * The management server's {@code -D} knobs, in one place (docs/configuration.md; the command-line options of
 * {@code rdmablock mgmt} are the other half): read and checked once per JVM ({@link #current()}, the first time a
 * server starts or builds its cluster state); a bad value fails that with an {@link IllegalArgumentException} naming
 * the property, its value and its bounds, as the node's and the initiator's homes do. Nothing is re-read later.
 *
 * @param startTimeoutSeconds {@link #START_TIMEOUT_SECONDS}
 * @param peerLeaseMaxMs      {@link #PEER_LEASE_MAX_MS}
 */
public record MgmtConfiguration(long startTimeoutSeconds, long peerLeaseMaxMs) {
    /**
     * Bound of a server's start, s, default 120, 1..3600 (a taken port fails at once; a start under emulation, e.g. the
     * QEMU TCG guest of ops/rdma-vm on a loaded host, took over 30 s).
     */
    public static final String START_TIMEOUT_SECONDS = "rdmablock.mgmt.startTimeoutSeconds";
    /**
     * How long after a heartbeat answer a node's secondary copies may go on granting peer leases (docs/failover.md,
     * "Peer lease"), ms, default 60000, 0..3600000; 0 = none. Sent in every heartbeat answer.
     */
    public static final String PEER_LEASE_MAX_MS = "rdmablock.mgmt.peerLeaseMaxMs";

    /*
     * The files of etcd's TLS and authentication and of the secrets' key (EtcdAccess, SecretCipher; docs/configuration.md):
     * each is a command-line option of rdmablock mgmt whose default is this system property, else the environment
     * variable named beside it, else none. Read by picocli at the command line, not by from()/current().
     */
    /** {@code --etcd-ca-cert}: CA of the etcd members' certificates, PEM (env {@code RDMABLOCK_ETCD_CA_CERT}). */
    public static final String ETCD_CA_CERT = "rdmablock.mgmt.etcdCaCert";
    /** {@code --etcd-cert}: client certificate towards etcd, PEM (env {@code RDMABLOCK_ETCD_CERT}). */
    public static final String ETCD_CERT = "rdmablock.mgmt.etcdCert";
    /** {@code --etcd-key}: its private key, PEM PKCS#8 (env {@code RDMABLOCK_ETCD_KEY}). */
    public static final String ETCD_KEY = "rdmablock.mgmt.etcdKey";
    /** {@code --etcd-user}: etcd user name (env {@code RDMABLOCK_ETCD_USER}). */
    public static final String ETCD_USER = "rdmablock.mgmt.etcdUser";
    /** {@code --etcd-password-file}: file holding its password (env {@code RDMABLOCK_ETCD_PASSWORD_FILE}). */
    public static final String ETCD_PASSWORD_FILE = "rdmablock.mgmt.etcdPasswordFile";
    /** {@code --secret-key-file}: key of the secrets at rest, base64 of 32 bytes (env {@code RDMABLOCK_SECRET_KEY_FILE}). */
    public static final String SECRET_KEY_FILE = "rdmablock.mgmt.secretKeyFile";

    /**
     * One number knob of this home: name, default, bounds, unit and description; read through it ({@link #read}) and
     * listed from it in docs/configuration.md (the node's and the initiator's homes use {@code
     * io.rdmablock.rdma.config.Knob}, which this module cannot see).
     *
     * @param name        the system property
     * @param def         its default
     * @param min         its least value
     * @param max         its largest value
     * @param unit        its unit, e.g. {@code ms}
     * @param description what it does (Markdown, one line)
     */
    public record Setting(String name, long def, long min, long max, String unit, String description) {
        /**
         * The value from {@code properties}, or {@link #def()} when unset or blank.
         *
         * @throws IllegalArgumentException naming the property, its value and its bounds when it is invalid
         */
        public long read(Function<String, String> properties) {
            return number(properties, name, def, min, max);
        }
    }

    private static final Setting S_START_TIMEOUT = new Setting(START_TIMEOUT_SECONDS, 120, 1, 3600, "s",
            "Bound of a server's start (a taken port fails at once; an emulated guest can take over 30 s).");
    private static final Setting S_PEER_LEASE_MAX = new Setting(PEER_LEASE_MAX_MS, 60_000, 0, 3_600_000, "ms",
            "How long after a heartbeat answer a node's secondary copies may grant peer leases (docs/failover.md "
                    + "\"Peer lease\"); 0 = none.");
    /** Every knob read by {@link #from}, as docs/configuration.md lists them. */
    public static final List<Setting> SETTINGS = List.of(S_START_TIMEOUT, S_PEER_LEASE_MAX);

    /** The defaults: 120 s, 60 s. */
    public static final MgmtConfiguration DEFAULTS = new MgmtConfiguration(S_START_TIMEOUT.def(),
            S_PEER_LEASE_MAX.def());

    public MgmtConfiguration {
        check(START_TIMEOUT_SECONDS, startTimeoutSeconds, S_START_TIMEOUT.min(), S_START_TIMEOUT.max());
        check(PEER_LEASE_MAX_MS, peerLeaseMaxMs, S_PEER_LEASE_MAX.min(), S_PEER_LEASE_MAX.max());
    }

    /**
     * The knobs from {@code properties} (a property's name to its value, null when unset), each checked.
     *
     * @throws IllegalArgumentException naming the property, its value and its bounds when one is invalid
     */
    public static MgmtConfiguration from(Function<String, String> properties) {
        return new MgmtConfiguration(S_START_TIMEOUT.read(properties), S_PEER_LEASE_MAX.read(properties));
    }

    /** This JVM's knobs, read once (the first call; the system properties as they are then). */
    public static MgmtConfiguration current() {
        return Holder.CURRENT;
    }

    private static final class Holder {
        static final MgmtConfiguration CURRENT = from(System::getProperty);
    }

    // the same rules and messages as io.rdmablock.rdma.config.Knobs (this module does not depend on rdma-io)
    private static long number(Function<String, String> properties, String name, long def, long min, long max) {
        String v = properties.apply(name);
        if (v == null || v.isBlank()) {
            return def;
        }
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + name + ": value=" + v.trim() + " (not a number), min="
                    + min + ", max=" + max);
        }
        check(name, n, min, max);
        return n;
    }

    private static void check(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("invalid " + name + ": value=" + v + ", min=" + min + ", max=" + max);
        }
    }
}
