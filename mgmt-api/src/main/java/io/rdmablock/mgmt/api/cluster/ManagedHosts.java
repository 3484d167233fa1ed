package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.store.HostRecord;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.client.Host;
import io.rdmablock.mgmt.client.HostSecret;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.SetHostRequest;
import io.rdmablock.nvme.auth.DhchapSecret;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The hosts that must pass DH-HMAC-CHAP and their secrets ({@code /v1/hosts}; docs/authentication.md, "Managed
 * secrets"), over the {@link MetadataStore}. Every write is a compare-and-set on the host's store revision
 * ({@link MetadataStore#replaceHost}, {@link MetadataStore#removeHost}), retried on a lost race at most
 * {@value #MAX_ATTEMPTS} times (then 503), so two servers or two requests never lose each other's write silently.
 * Secrets are validated by the one parser of the code base ({@link DhchapSecret#parse}, whose messages never contain
 * a key) and stored in their canonical text form; answers ({@link Host}) never carry them, only the nodes' heartbeat
 * answers do ({@link #forNodes}). Thread-safe (no state besides the store).
 */
public final class ManagedHosts {
    /** Attempts of one compare-and-set write before answering 503. */
    static final int MAX_ATTEMPTS = 8;
    private static final String[] HASH_NAMES = {"none", "sha256", "sha384", "sha512"};

    private final MetadataStore store;
    private final LongSupplier wallMs;

    /** The answer to a set: the host and whether it was new (201) or replaced (200). */
    public record Written(Host host, boolean created) {
    }

    ManagedHosts(MetadataStore store, LongSupplier wallMs) {
        this.store = store;
        this.wallMs = wallMs;
    }

    /**
     * Sets (creates or replaces) a host's secrets. Errors: 400 validation naming {@code hostNqn},
     * {@code dhchapSecret} or {@code dhchapCtrlSecret} (never the key); 503 when the compare-and-set keeps losing.
     */
    public Written set(String hostNqn, SetHostRequest request) {
        ApiException.check(() -> Limits.checkHostNqn("hostNqn", hostNqn));
        String secret = canonical("dhchapSecret", request.dhchapSecret());
        String ctrl = request.dhchapCtrlSecret() == null ? null : canonical("dhchapCtrlSecret",
                request.dhchapCtrlSecret());
        var next = new HostRecord(hostNqn, secret, ctrl, wallMs.getAsLong());
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            Optional<Versioned<HostRecord>> current = store.hostVersioned(hostNqn);
            long expected = current.map(Versioned::revision).orElse(0L);
            if (store.replaceHost(hostNqn, expected, next)) {
                Versioned<HostRecord> written = store.hostVersioned(hostNqn)
                        .orElseThrow(() -> busy("host " + hostNqn + " was removed right after it was written"));
                return new Written(toHost(written), current.isEmpty());
            }
        }
        throw busy("write of host " + hostNqn + ": another writer changed it " + MAX_ATTEMPTS + " times meanwhile");
    }

    /** @return every host, ordered by NQN, without secrets */
    public List<Host> list() {
        return store.hosts().stream().map(ManagedHosts::toHost).toList();
    }

    /** @return that host without secrets. Errors: 400 bad NQN, 404 host-not-found. */
    public Host get(String hostNqn) {
        ApiException.check(() -> Limits.checkHostNqn("hostNqn", hostNqn));
        return store.hostVersioned(hostNqn).map(ManagedHosts::toHost).orElseThrow(() -> notFound(hostNqn));
    }

    /** Removes a host: it connects without authentication again. Errors: 400 bad NQN, 404, 503 (lost races). */
    public void remove(String hostNqn) {
        ApiException.check(() -> Limits.checkHostNqn("hostNqn", hostNqn));
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            Versioned<HostRecord> current = store.hostVersioned(hostNqn).orElseThrow(() -> notFound(hostNqn));
            if (store.removeHost(hostNqn, current.revision())) {
                return;
            }
        }
        throw busy("removal of host " + hostNqn + ": another writer changed it " + MAX_ATTEMPTS + " times meanwhile");
    }

    /** @return every host with its secrets, for the nodes' heartbeat answers (all hosts: see the class comment) */
    List<HostSecret> forNodes() {
        return store.hosts().stream().map(v -> new HostSecret(v.value().hostNqn(), v.value().dhchapSecret(),
                v.value().dhchapCtrlSecret(), v.revision())).toList();
    }

    /** @return the canonical text of a valid secret; 400 naming the field and the fault (never the key) */
    private static String canonical(String field, String text) {
        if (text == null) {
            throw ApiException.validation("invalid " + field + ": " + field + " is required");
        }
        try {
            return DhchapSecret.parse(text).encoded();
        } catch (IllegalArgumentException e) {
            throw ApiException.validation("invalid " + field + ": " + e.getMessage());
        }
    }

    /** @return the REST view: no secret, only its kind, a fingerprint and the revision */
    static Host toHost(Versioned<HostRecord> v) {
        HostRecord h = v.value();
        DhchapSecret secret = DhchapSecret.parse(h.dhchapSecret());
        return new Host(h.hostNqn(), HASH_NAMES[secret.hh()], secret.keyLengthBytes(), fingerprint(h.dhchapSecret()),
                h.dhchapCtrlSecret() != null, v.revision(), Instant.ofEpochMilli(h.updatedAtMs()).toString());
    }

    /** @return the first 16 hex digits of SHA-256 over the text */
    static String fingerprint(String text) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    private static ApiException notFound(String hostNqn) {
        return new ApiException(404, ProblemTypes.HOST_NOT_FOUND, "Host not found", "no host with hostNqn " + hostNqn
                + " (set one with PUT /v1/hosts/{hostNqn})");
    }

    private static ApiException busy(String detail) {
        return new ApiException(503, ProblemTypes.INTERNAL, "Busy", detail + "; retry");
    }
}
