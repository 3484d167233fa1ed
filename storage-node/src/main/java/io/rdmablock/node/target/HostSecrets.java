package io.rdmablock.node.target;

import io.rdmablock.nvme.auth.NodeLinkKeys;

import io.rdmablock.rdma.fabric.auth.DhchapController;
import io.rdmablock.nvme.auth.DhchapSecret;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The DH-HMAC-CHAP secrets of the hosts that must authenticate (NVMe in-band authentication, docs/wire-protocol.md
 * section 5.4): a host NQN listed here must pass DH-HMAC-CHAP on every queue, after its Connect and before any other
 * command, on every volume subsystem of the node (not the discovery subsystem); an unlisted host connects as before.
 * Each entry holds the host's secret and optionally the controller's secret (bidirectional authentication, when the
 * host asks for it). Set on the {@link Target} with {@link Target#hostSecrets(HostSecrets)}; it applies to queues
 * connecting afterwards.
 *
 * <p>File form ({@code rdmablock node --dhchap-secrets FILE}), one host a line, fields separated by blanks, {@code #}
 * starts a comment:
 * <pre>
 *   # hostnqn                                  host secret            [controller secret]
 *   nqn.2014-08.org.nvmexpress:uuid:...        DHHC-1:01:...:         DHHC-1:03:...:
 * </pre>
 * Secrets are in the {@code DHHC-1} form of nvme-cli {@code gen-dhchap-key} ({@link DhchapSecret}).
 *
 * <p>Peer nodes ({@value Subsystem#NODE_HOSTNQN_PREFIX}...) are not listed: with this node's <em>node key</em>
 * ({@link #withNodeKey}, from the management plane) each one's secrets are derived from its host NQN
 * ({@link NodeLinkKeys}; docs/authentication.md, "Node identities"), and a node NQN must always authenticate; without
 * a node key no peer node can prove itself (a secondary then admits none). Immutable (the derived entries are
 * cached).
 */
public final class HostSecrets {
    /** One host's secrets; {@code ctrlSecret} may be null. */
    public record Entry(DhchapSecret hostSecret, DhchapSecret ctrlSecret) {
        public Entry {
            if (hostSecret == null) {
                throw new IllegalArgumentException("invalid host secrets entry: hostSecret=null");
            }
        }
    }

    /**
     * What a peer node's queues negotiate: SHA-256 and the NULL DH group only (NVMe Base 2.0 section 8.13.5.1:
     * DH-HMAC-CHAP without the Diffie-Hellman exchange is the HMAC challenge-response alone). The link secrets are
     * 256 random bits, so a DH exchange would add nothing to the proof, while it costs each association two DH
     * computations per queue on both nodes (hundreds of ms under emulation); a peer claiming a node NQN can then make
     * the node do no DH work at all.
     */
    public static final DhchapController.Policy NODE_LINK_POLICY = new DhchapController.Policy(
            List.of(io.rdmablock.nvme.auth.DhchapHash.SHA_256),
            List.of(io.rdmablock.rdma.fabric.auth.DhGroup.NULL));

    /** No host needs to authenticate. */
    public static final HostSecrets NONE = new HostSecrets(Map.of(), DhchapController.Policy.DEFAULT, null,
            Set.of());

    private final Map<String, Entry> byHostnqn;
    private final DhchapController.Policy policy;
    /** This node's node key ({@link NodeLinkKeys#KEY_BYTES} bytes), or null when none was given. */
    private final byte[] nodeKey;
    /** Derived entries of peer nodes, by host NQN (bounded: cleared when it grows past 4096). */
    private final java.util.concurrent.ConcurrentHashMap<String, Entry> derived =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** Hosts that must authenticate but whose secret this node was not given ({@link #withUnknownSecrets}). */
    private final Set<String> unknown;

    private HostSecrets(Map<String, Entry> byHostnqn, DhchapController.Policy policy, byte[] nodeKey,
                        Set<String> unknown) {
        this.byHostnqn = Map.copyOf(byHostnqn);
        this.policy = policy;
        this.nodeKey = nodeKey;
        this.unknown = Set.copyOf(unknown);
    }

    /**
     * The same entries, and {@code hostnqns} marked as hosts that have a secret this node was not given (the
     * management server withheld it: no TLS, docs/authentication.md "Secrets only over TLS"): such a host cannot
     * authenticate here and is refused ({@link #secretUnknown}) rather than admitted unauthenticated. Listed hosts
     * are not marked.
     */
    public HostSecrets withUnknownSecrets(Set<String> hostnqns) {
        Set<String> s = new java.util.TreeSet<>(hostnqns);
        s.removeAll(byHostnqn.keySet());
        return new HostSecrets(byHostnqn, policy, nodeKey, s);
    }

    /** True when {@code hostnqn} has a secret this node was not given ({@link #withUnknownSecrets}). */
    public boolean secretUnknown(String hostnqn) {
        return hostnqn != null && unknown.contains(hostnqn);
    }

    /** The hosts marked by {@link #withUnknownSecrets}. */
    public Set<String> unknownSecrets() {
        return unknown;
    }

    /**
     * The same entries with this node's node key: peer nodes are then checked with their derived link secrets.
     *
     * @param key {@link NodeLinkKeys#KEY_BYTES} bytes (copied), or null for none
     * @throws IllegalArgumentException for another length
     */
    public HostSecrets withNodeKey(byte[] key) {
        if (key != null && key.length != NodeLinkKeys.KEY_BYTES) {
            throw new IllegalArgumentException("invalid node key: length=" + key.length + ", expected "
                    + NodeLinkKeys.KEY_BYTES);
        }
        return new HostSecrets(byHostnqn, policy, key == null ? null : key.clone(), unknown);
    }

    /** True when a node key is set ({@link #withNodeKey}). */
    public boolean hasNodeKey() {
        return nodeKey != null;
    }

    /** True for a host NQN of the cluster's nodes ({@value Subsystem#NODE_HOSTNQN_PREFIX}...). */
    public static boolean isNodeNqn(String hostnqn) {
        return hostnqn != null && hostnqn.startsWith(Subsystem.NODE_HOSTNQN_PREFIX)
                && hostnqn.length() > Subsystem.NODE_HOSTNQN_PREFIX.length();
    }

    /** These entries, with the default hash and DH group order ({@link DhchapController.Policy#DEFAULT}). */
    public static HostSecrets of(Map<String, Entry> byHostnqn) {
        return new HostSecrets(byHostnqn, DhchapController.Policy.DEFAULT, null, Set.of());
    }

    /** The same entries, negotiated with {@code p}. */
    public HostSecrets withPolicy(DhchapController.Policy p) {
        return new HostSecrets(byHostnqn, p, nodeKey, unknown);
    }

    /**
     * Reads the file form.
     *
     * @throws IllegalArgumentException naming the file and line of a malformed entry (never the secret)
     */
    public static HostSecrets load(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        Map<String, Entry> m = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            String[] f = (hash >= 0 ? line.substring(0, hash) : line).trim().split("\\s+");
            if (f.length == 1 && f[0].isEmpty()) {
                continue;
            }
            String where = file + " line " + (i + 1);
            if (f.length < 2 || f.length > 3) {
                throw new IllegalArgumentException("invalid DH-HMAC-CHAP secrets: " + where + ": fields=" + f.length
                        + ", expected: hostnqn secret [ctrl-secret]");
            }
            try {
                Entry e = new Entry(DhchapSecret.parse(f[1]), f.length == 3 ? DhchapSecret.parse(f[2]) : null);
                if (m.put(f[0], e) != null) {
                    throw new IllegalArgumentException("hostnqn " + f[0] + " listed twice");
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("invalid DH-HMAC-CHAP secrets: " + where + ": " + e.getMessage(), e);
            }
        }
        return of(m);
    }

    /**
     * This (e.g. the node's file) merged with {@code more} (e.g. the management server's hosts): every entry of
     * this, and each entry of {@code more} whose host this does not list. On a conflict this one wins.
     */
    public HostSecrets merged(Map<String, Entry> more) {
        Map<String, Entry> m = new LinkedHashMap<>(more);
        m.putAll(byHostnqn);
        return new HostSecrets(m, policy, nodeKey, unknown);
    }

    /**
     * The entry of {@code hostnqn}, or null when that host need not authenticate. A peer node's
     * ({@link #isNodeNqn}) is derived from the node key (host and controller secret) and never taken from a list;
     * null without a node key.
     */
    public Entry lookup(String hostnqn) {
        if (isNodeNqn(hostnqn)) {
            if (nodeKey == null) {
                return null;
            }
            Entry e = derived.get(hostnqn);
            if (e == null) {
                if (derived.size() >= 4096) {
                    derived.clear();
                }
                e = new Entry(NodeLinkKeys.hostSecret(nodeKey, hostnqn), NodeLinkKeys.ctrlSecret(nodeKey, hostnqn));
                derived.put(hostnqn, e);
            }
            return e;
        }
        return byHostnqn.get(hostnqn);
    }

    public DhchapController.Policy policy() {
        return policy;
    }

    /** Number of hosts listed. */
    public int size() {
        return byHostnqn.size();
    }

    @Override
    public String toString() {
        return "HostSecrets[hosts=" + byHostnqn.keySet() + ", nodeKey=" + (nodeKey == null ? "none" : "set") + "]";
    }
}
