package io.rdmablock.mgmt.client;

import java.net.URI;
import java.util.HashSet;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Bounds of every management input, checked identically by the server (answer 400
 * {@link ProblemTypes#VALIDATION}) and by the CLI (exit code 2) before sending. Every check throws
 * {@link IllegalArgumentException} whose message names the field, the value and the bounds, e.g.
 * {@code invalid sizeBytes: sizeBytes=1000, must be a multiple of 1048576, min=1048576, max=70368744177664}.
 *
 * <p>Sizes: a volume size is a positive multiple of 1 MiB. 1 MiB is a multiple of both LBA sizes (512, 4096),
 * so a size is always a whole number of blocks whatever the LBA size, and a 1 MiB granule keeps the node's
 * allocation simple. The maximum is 64 TiB per volume.
 */
public final class Limits {
    /** Volume names and node ids: lower-case letter or digit first, then up to 62 of {@code [a-z0-9._-]}. */
    public static final String NAME_PATTERN = "^[a-z0-9][a-z0-9._-]{0,62}$";
    /** Volume sizes are multiples of this (1 MiB). */
    public static final long SIZE_ALIGNMENT_BYTES = 1L << 20;
    /** Smallest volume (1 MiB). */
    public static final long MIN_SIZE_BYTES = SIZE_ALIGNMENT_BYTES;
    /** Largest volume (64 TiB). */
    public static final long MAX_SIZE_BYTES = 64L << 40;
    /** The accepted logical block sizes in bytes. */
    public static final List<Integer> LBA_SIZES = List.of(512, 4096);
    /** Fewest copies of a volume. */
    public static final int MIN_REPLICAS = 1;
    /** Most copies of a volume (each on its own node). */
    public static final int MAX_REPLICAS = 5;
    /** Smallest minInSync; the largest is the volume's replicas. */
    public static final int MIN_IN_SYNC = 1;
    /** Smallest volume epoch (0 in a forwarded command is Invalid Field, docs/replication.md). */
    public static final long MIN_EPOCH = 1;
    /**
     * The allowedHosts entry that admits any host; it must be the only entry. Without it a volume admits exactly the
     * listed hosts, none when the list is empty (as Linux nvmet and SPDK: a subsystem admits no host until one is
     * added or allow_any_host is set).
     */
    public static final String ANY_HOST = "*";
    /** Most entries in allowedHosts. */
    public static final int MAX_ALLOWED_HOSTS = 64;
    /** Longest NQN in bytes (NVMe Base Specification 2.0, section 4.5: NQNs are at most 223 bytes). */
    public static final int MAX_NQN_BYTES = 223;
    /** NQN shape: {@code nqn.yyyy-mm.<reverse domain>[:<anything printable>]} (NVMe Base 2.0, 4.5). */
    public static final String NQN_PATTERN = "^nqn\\.[0-9]{4}-[0-9]{2}\\.[a-z0-9][a-z0-9.-]*(:[\\x21-\\x7e]+)?$";
    /** Longest metricsUrl. */
    public static final int MAX_URL_CHARS = 2048;
    /** Longest fabricAddress ({@code host:port}). */
    public static final int MAX_ADDRESS_CHARS = 261;

    private static final Pattern NAME = Pattern.compile(NAME_PATTERN);
    private static final Pattern NQN = Pattern.compile(NQN_PATTERN);

    private Limits() {
    }

    /** Checks a volume name or node id against {@link #NAME_PATTERN}. */
    public static void checkName(String field, String value) {
        if (value == null || !NAME.matcher(value).matches()) {
            throw invalid(field, quote(value), "must match " + NAME_PATTERN
                    + " (1..63 chars: lower-case letter or digit, then letters, digits, '.', '_', '-')");
        }
    }

    /** Most snapshots one volume may hold (any state). */
    public static final int MAX_SNAPSHOTS_PER_VOLUME = 32;
    /** A snapshot name: 1..64 of {@code [A-Za-z0-9._-]}, first a letter or digit. */
    public static final String SNAPSHOT_NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";
    private static final java.util.regex.Pattern SNAPSHOT_NAME =
            java.util.regex.Pattern.compile(SNAPSHOT_NAME_PATTERN);

    /** Checks a snapshot name ({@link #SNAPSHOT_NAME_PATTERN}); the message names {@code field}. */
    public static void checkSnapshotName(String field, String value) {
        if (value == null || !SNAPSHOT_NAME.matcher(value).matches()) {
            throw invalid(field, quote(value), "must match " + SNAPSHOT_NAME_PATTERN
                    + " (1..64 chars: letter or digit, then letters, digits, '.', '_', '-')");
        }
    }

    /** Checks a volume size: multiple of 1 MiB (hence of lbaSize), {@code min <= size <= max}. */
    public static void checkSize(String field, long sizeBytes) {
        if (sizeBytes < MIN_SIZE_BYTES || sizeBytes > MAX_SIZE_BYTES || sizeBytes % SIZE_ALIGNMENT_BYTES != 0) {
            throw invalid(field, Long.toString(sizeBytes), "must be a multiple of " + SIZE_ALIGNMENT_BYTES
                    + ", min=" + MIN_SIZE_BYTES + ", max=" + MAX_SIZE_BYTES);
        }
    }

    /** Checks an LBA size: 512 or 4096. */
    public static void checkLbaSize(int lbaSize) {
        if (!LBA_SIZES.contains(lbaSize)) {
            throw invalid("lbaSize", Integer.toString(lbaSize), "must be one of " + LBA_SIZES);
        }
    }

    /** Checks the replication factor. */
    public static void checkReplicas(int replicas) {
        if (replicas < MIN_REPLICAS || replicas > MAX_REPLICAS) {
            throw invalid("replicas", Integer.toString(replicas), "min=" + MIN_REPLICAS + ", max=" + MAX_REPLICAS);
        }
    }

    /** @return the default minInSync for {@code replicas} copies: {@code max(1, replicas - 1)} */
    public static int defaultMinInSync(int replicas) {
        return Math.max(MIN_IN_SYNC, replicas - 1);
    }

    /** Checks minInSync against the volume's replicas: {@code 1 <= minInSync <= replicas}. */
    public static void checkMinInSync(String field, int minInSync, int replicas) {
        if (minInSync < MIN_IN_SYNC || minInSync > replicas) {
            throw invalid(field, Integer.toString(minInSync), "min=" + MIN_IN_SYNC + ", max=replicas=" + replicas);
        }
    }

    /** Checks a volume epoch: {@code >= 1}. */
    public static void checkEpoch(long epoch) {
        if (epoch < MIN_EPOCH) {
            throw invalid("epoch", Long.toString(epoch), "min=" + MIN_EPOCH);
        }
    }

    /** Checks a stale-copy report: epoch {@code >= 1}, reporter a node id. */
    public static void check(MarkCopyStaleRequest request) {
        checkEpoch(request.epoch());
        checkName("reporter", request.reporter());
    }

    /** Checks an unreachable report: epoch &gt;= 0 (0: unknown), reporter 1..223 printable ASCII characters. */
    public static void check(UnreachableReport request) {
        if (request.epoch() < 0) {
            throw invalid("epoch", Long.toString(request.epoch()), "min=0");
        }
        String r = request.reporter();
        if (r == null || r.isEmpty() || r.length() > MAX_NQN_BYTES || !r.chars().allMatch(ch -> ch > 0x20 && ch < 0x7f)) {
            throw invalid("reporter", quote(r), "must be a node id or host NQN of 1.." + MAX_NQN_BYTES
                    + " printable ASCII characters without spaces");
        }
    }

    /** Checks a promote request: nodeId a name. */
    public static void check(PromoteRequest request) {
        checkName("nodeId", request.nodeId());
    }

    /**
     * Checks one host NQN: well-formed ({@link #NQN_PATTERN}) and at most {@link #MAX_NQN_BYTES} bytes.
     *
     * @throws IllegalArgumentException naming {@code field} and the value
     */
    public static void checkHostNqn(String field, String hostNqn) {
        if (hostNqn == null || hostNqn.length() > MAX_NQN_BYTES || !NQN.matcher(hostNqn).matches()) {
            throw invalid(field, quote(hostNqn), "must be an NQN matching " + NQN_PATTERN + ", max bytes="
                    + MAX_NQN_BYTES);
        }
    }

    /**
     * Checks allowedHosts: at most 64 distinct NQNs, each well-formed and at most 223 bytes, or exactly
     * {@code ["*"]} ({@link #ANY_HOST}).
     */
    public static void checkAllowedHosts(List<String> hosts) {
        if (hosts == null) {
            return;
        }
        if (hosts.size() > MAX_ALLOWED_HOSTS) {
            throw invalid("allowedHosts", "[" + hosts.size() + " entries]", "max entries=" + MAX_ALLOWED_HOSTS);
        }
        var seen = new HashSet<String>();
        for (int i = 0; i < hosts.size(); i++) {
            String host = hosts.get(i);
            String field = "allowedHosts[" + i + "]";
            if (ANY_HOST.equals(host)) {
                if (hosts.size() != 1) {
                    throw invalid(field, quote(host), "\"*\" admits any host and must be the only entry");
                }
                continue;
            }
            if (host == null || host.length() > MAX_NQN_BYTES || !NQN.matcher(host).matches()) {
                throw invalid(field, quote(host), "must be an NQN matching " + NQN_PATTERN
                        + ", max bytes=" + MAX_NQN_BYTES);
            }
            if (!seen.add(host)) {
                throw invalid(field, quote(host), "duplicate entry");
            }
        }
    }

    /** Checks a whole create request. */
    public static void check(CreateVolumeRequest request) {
        checkName("name", request.name());
        checkLbaSize(request.lbaSize());
        checkSize("sizeBytes", request.sizeBytes());
        checkReplicas(request.replicas());
        checkMinInSync("minInSync", request.minInSync(), request.replicas());
        checkAllowedHosts(request.allowedHosts());
        request.qos().check();
    }

    /** Checks a fabric address {@code host:port} (IPv6 as {@code [addr]:port}), port 1..65535. */
    public static void checkAddress(String field, String address) {
        String why = "must be host:port with port 1..65535, max chars=" + MAX_ADDRESS_CHARS;
        if (address == null || address.isEmpty() || address.length() > MAX_ADDRESS_CHARS) {
            throw invalid(field, quote(address), why);
        }
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw invalid(field, quote(address), why);
        }
        String host = address.substring(0, colon);
        if (host.chars().anyMatch(c -> c <= ' ' || c > '~')) {
            throw invalid(field, quote(address), why);
        }
        if (host.contains(":") && !(host.startsWith("[") && host.endsWith("]"))) {
            throw invalid(field, quote(address), why);
        }
        try {
            int port = Integer.parseInt(address.substring(colon + 1));
            if (port < 1 || port > 65535) {
                throw invalid(field, quote(address), why);
            }
        } catch (NumberFormatException e) {
            throw invalid(field, quote(address), why);
        }
    }

    /** Checks a metrics URL: empty or an absolute http(s) URL of at most 2048 chars. */
    public static void checkMetricsUrl(String url) {
        if (url == null || url.isEmpty()) {
            return;
        }
        String why = "must be empty or an absolute http(s) URL, max chars=" + MAX_URL_CHARS;
        if (url.length() > MAX_URL_CHARS) {
            throw invalid("metricsUrl", "[" + url.length() + " chars]", why);
        }
        try {
            URI uri = new URI(url);
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                throw invalid("metricsUrl", quote(url), why);
            }
        } catch (java.net.URISyntaxException e) {
            throw invalid("metricsUrl", quote(url), why);
        }
    }

    /** Checks a node registration. */
    public static void check(RegisterNodeRequest request) {
        checkName("nodeId", request.nodeId());
        checkAddress("fabricAddress", request.fabricAddress());
        checkMetricsUrl(request.metricsUrl());
        if (request.capacityBytes() <= 0) {
            throw invalid("capacityBytes", Long.toString(request.capacityBytes()), "min=1");
        }
        checkFree(request.freeBytes(), request.capacityBytes());
    }

    /** Checks a reported free capacity: {@code 0 <= freeBytes <= capacityBytes}. */
    public static void checkFree(long freeBytes, long capacityBytes) {
        if (freeBytes < 0 || freeBytes > capacityBytes) {
            throw invalid("freeBytes", Long.toString(freeBytes), "min=0, max=capacityBytes=" + capacityBytes);
        }
    }

    /** @return {@code IllegalArgumentException("invalid <field>: <field>=<value>, <bounds>")} */
    public static IllegalArgumentException invalid(String field, String value, String bounds) {
        return new IllegalArgumentException("invalid " + field + ": " + field + "=" + value + ", " + bounds);
    }

    private static String quote(String value) {
        return value == null ? "null" : "\"" + value + "\"";
    }
}
