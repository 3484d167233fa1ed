package io.rdmablock.tools.device;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.Volume;
import picocli.CommandLine.Option;


/**
 * How a command reaches a volume on a storage node (picocli mixin; the one set of these options for every command):
 * {@code --volume NAME} through the management server ({@code --mgmt-url}, {@code --token}; environment
 * {@code RDMABLOCK_MGMT_URL}, {@code RDMABLOCK_TOKEN}; a comma-separated list of several management servers is
 * tried in turn, docs/ha.md), or directly with {@code --address host:port --subnqn NQN}
 * (no management server, any NVMe-oF/RDMA target: also Linux nvmet or SPDK); {@code --hostnqn}, {@code --nsid},
 * {@code --provider} and {@code --io-queues} for the connection. The token a host should hold is a host credential
 * ({@code rbh1:<id>:<secret>}, docs/authentication.md "Credentials and scopes"): it reads the volume and reports its
 * primary unreachable as the NQN it was issued for, so it needs that NQN as {@code --hostnqn}.
 */
public final class ConnectOptions {
    static final String DEFAULT_MGMT_URL = "http://127.0.0.1:8080";

    @Option(names = "--volume", paramLabel = "NAME", description = "Volume name (looked up on the management server).")
    String volume;

    @Option(names = "--mgmt-url", paramLabel = "URL[,URL...]",
            description = "Management server URL, or a comma-separated list of several (default: "
                    + "$RDMABLOCK_MGMT_URL, else http://127.0.0.1:8080).")
    String mgmtUrl;

    @Option(names = "--token", paramLabel = "TOKEN", description = "Bearer token: a host credential rbh1:ID:SECRET "
            + "(rdmablock host credential create; give its NQN as --hostnqn), the read-only or the cluster token "
            + "(default: $RDMABLOCK_TOKEN, else $RDMABLOCK_READ_TOKEN).")
    String token;

    @Option(names = "--token-file", paramLabel = "FILE", description = "Read the bearer token from FILE instead.")
    java.nio.file.Path tokenFile;

    @Option(names = "--ca-cert", paramLabel = "PEM", description = "Trust only this CA (PEM) for an https --mgmt-url "
            + "(default: $RDMABLOCK_CA_CERT, else the JDK's CAs).")
    java.nio.file.Path caCert;

    @Option(names = "--address", paramLabel = "HOST:PORT",
            description = "Storage node fabric address; with --subnqn, connects without the management server.")
    String address;

    @Option(names = "--subnqn", paramLabel = "NQN", description = "Subsystem NQN of the volume (with --address).")
    String subnqn;

    @Option(names = "--hostnqn", paramLabel = "NQN", description = "Host NQN (default: $RDMABLOCK_HOSTNQN, else "
            + "/etc/nvme/hostnqn as nvme-cli, else a random UUID-based NQN). A volume admits only the hosts it names.")
    String hostnqn;

    @Option(names = "--dhchap-secret", paramLabel = "DHHC-1:..", description = "Host secret for NVMe in-band "
            + "authentication (DH-HMAC-CHAP), as nvme gen-dhchap-key writes it (default: $RDMABLOCK_DHCHAP_SECRET). "
            + "Needed when the node requires authentication for this host NQN.")
    String dhchapSecret;

    @Option(names = "--dhchap-ctrl-secret", paramLabel = "DHHC-1:..", description = "The node's secret: the host "
            + "authenticates the node too (bidirectional; default: $RDMABLOCK_DHCHAP_CTRL_SECRET).")
    String dhchapCtrlSecret;

    @Option(names = "--nsid", paramLabel = "N", defaultValue = "0",
            description = "Namespace id (default 0: nsid 1 when active, else the subsystem's first active namespace).")
    long nsid;

    @Option(names = "--provider", paramLabel = "auto|soft|ffm|memory", description = "Verbs provider (memory: a node in this JVM only; default: $RDMABLOCK_RDMA_PROVIDER or auto).")
    String provider;

    int ioQueues = 2;

    @picocli.CommandLine.Spec(picocli.CommandLine.Spec.Target.MIXEE)
    picocli.CommandLine.Model.CommandSpec mixee;

    @Option(names = "--io-queues", paramLabel = "N", defaultValue = "2",
            description = "I/O queue pairs, 1..64 (bench opens one per job instead) (default: ${DEFAULT-VALUE}).")
    void ioQueues(int n) {
        if (n < 1 || n > 64) {
            throw new picocli.CommandLine.ParameterException(mixee.commandLine(),
                    "invalid --io-queues: " + n + ", min=1, max=64");
        }
        ioQueues = n;
    }

    long pathTimeoutMs = 1_000;

    @Option(names = "--path-timeout-ms", paramLabel = "MS", defaultValue = "1000",
            description = "Replicated volumes: an I/O outstanding this long on a path fences the path and moves to "
                    + "another, 0..3600000, 0 = off (default: ${DEFAULT-VALUE}).")
    void pathTimeoutMs(long ms) {
        if (ms < 0 || ms > 3_600_000) {
            throw new picocli.CommandLine.ParameterException(mixee.commandLine(),
                    "invalid --path-timeout-ms: " + ms + ", min=0, max=3600000");
        }
        pathTimeoutMs = ms;
    }

    long failoverTimeoutMs = 30_000;

    @Option(names = "--failover-timeout-ms", paramLabel = "MS", defaultValue = "30000",
            description = "Replicated volumes: how long I/O waits for an Optimized path before the device is lost, "
                    + "1..86400000 (default: ${DEFAULT-VALUE}).")
    void failoverTimeoutMs(long ms) {
        if (ms < 1 || ms > 86_400_000) {
            throw new picocli.CommandLine.ParameterException(mixee.commandLine(),
                    "invalid --failover-timeout-ms: " + ms + ", min=1, max=86400000");
        }
        failoverTimeoutMs = ms;
    }

    /** True when a volume or a node address was named (the remote source was chosen). */
    public boolean given() {
        return volume != null || address != null || subnqn != null;
    }

    /** Opens the volume with {@code --io-queues} I/O queues; see {@link #open(int)}. */
    public BlockDevice open() {
        return open(ioQueues);
    }

    /**
     * Opens the volume with {@code ioQueues} I/O queue pairs.
     *
     * @throws IllegalArgumentException when neither --volume nor --address/--subnqn are given, one of --address and
     *                                  --subnqn is missing, or --volume does not match --subnqn
     * @throws io.rdmablock.initiator.BlockIoException   as {@link NvmeBlockDevice#open}
     */
    public BlockDevice open(int ioQueues) {
        if (nsid < 0 || nsid > 0xFFFFFFFEL) {
            throw new IllegalArgumentException("invalid --nsid: " + nsid + ", min=0, max=4294967294");
        }
        DeviceOptions opts = DeviceOptions.defaults().ioQueues(ioQueues).providerMode(provider).nsid((int) nsid)
                .pathTimeoutMs(pathTimeoutMs).failoverTimeoutMs(failoverTimeoutMs)
                .dhchap(secret("--dhchap-secret", dhchapSecret, "RDMABLOCK_DHCHAP_SECRET"),
                        secret("--dhchap-ctrl-secret", dhchapCtrlSecret, "RDMABLOCK_DHCHAP_CTRL_SECRET"));
        if (address != null || subnqn != null) {
            if (address == null || subnqn == null) {
                throw new IllegalArgumentException("--address and --subnqn go together");
            }
            if (volume != null && !subnqn.endsWith(":" + volume)) {
                throw new IllegalArgumentException("--volume " + volume + " does not match --subnqn " + subnqn);
            }
            return NvmeBlockDevice.open(VolumeLocator.parseAddress(address), subnqn, hostnqn(), opts);
        }
        if (volume == null) {
            throw new IllegalArgumentException("give --volume NAME, or --address HOST:PORT and --subnqn NQN");
        }
        String nqn = hostnqn();
        if (nqn == null && isHostCredential(token())) {
            throw new IllegalArgumentException("invalid --hostnqn: none given, but the token is a host credential"
                    + " (rbh1:...), which acts only for the host NQN it was issued for: give that NQN as --hostnqn"
                    + " (or $RDMABLOCK_HOSTNQN)");
        }
        return VolumeLocator.open(mgmtClient(), volume, nqn, opts);
    }

    /** File nvme-cli reads the host NQN from (nvme-cli {@code nvmf_hostnqn_file}). */
    static final java.nio.file.Path NVME_HOSTNQN_FILE = java.nio.file.Path.of("/etc/nvme/hostnqn");
    /** Where {@link #hostnqn()} looks last ({@link #NVME_HOSTNQN_FILE}; tests point it elsewhere). */
    java.nio.file.Path hostnqnFile = NVME_HOSTNQN_FILE;

    /**
     * The host NQN to connect as: {@code --hostnqn}, else {@code $RDMABLOCK_HOSTNQN}, else the first line of
     * {@link #hostnqnFile} when readable and not blank (as nvme-cli), else null (a random UUID-based NQN).
     */
    String hostnqn() {
        if (hostnqn != null) {
            return hostnqn;
        }
        String env = System.getenv("RDMABLOCK_HOSTNQN");
        if (env != null && !env.isBlank()) {
            return env.strip();
        }
        try {
            if (java.nio.file.Files.isReadable(hostnqnFile)) {
                String line = java.nio.file.Files.readAllLines(hostnqnFile).stream().findFirst().orElse("")
                        .strip();
                return line.isEmpty() ? null : line;
            }
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            return null;
        }
        return null;
    }

    /** The secret of {@code option}, else of environment variable {@code env}, else null; errors name the source. */
    static io.rdmablock.nvme.auth.DhchapSecret secret(String option, String value, String env) {
        String text = value != null ? value : System.getenv(env);
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return io.rdmablock.nvme.auth.DhchapSecret.parse(text.strip());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid " + (value != null ? option : "$" + env) + ": "
                    + e.getMessage(), e);
        }
    }

    /** What to call the target in messages. */
    public String describe() {
        return volume != null ? "volume " + volume : subnqn + " at " + address;
    }

    /** A short name of the target: the volume name, else the subnqn, else the address. */
    public String displayName() {
        return volume != null ? volume : subnqn != null ? subnqn : address;
    }

    /**
     * The storage node's fabric address {@code host:port}: {@code --address}, or for {@code --volume} the address the
     * management server reports; null when it cannot be asked.
     */
    public String nodeAddress() {
        if (address != null) {
            return address;
        }
        if (volume == null) {
            return null;
        }
        try {
            return mgmtClient().getVolume(volume).fabricAddress();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * Snapshot {@code name} of the {@code --volume} as the management server shows it
     * ({@code GET /v1/volumes/{volume}/snapshots/{name}}: its id and size); needs the read or the cluster token.
     *
     * @throws IllegalArgumentException without {@code --volume} (a node address alone has no names)
     * @throws io.rdmablock.mgmt.client.MgmtException as the server answered (404 {@code snapshot-not-found}, ...)
     */
    public io.rdmablock.mgmt.client.Snapshot snapshot(String name) {
        if (volume == null || address != null) {
            throw new IllegalArgumentException("--snapshot " + name + " is looked up on the management server: give "
                    + "--volume NAME without --address/--subnqn, or the snapshot's id as --snapshot-id");
        }
        return mgmtClient().getSnapshot(volume, name);
    }

    /** The --io-queues value. */
    public int ioQueues() {
        return ioQueues;
    }

    MgmtClient mgmtClient() {
        String url = mgmtUrl != null ? mgmtUrl : System.getenv("RDMABLOCK_MGMT_URL");
        String source = mgmtUrl != null ? "--mgmt-url" : "RDMABLOCK_MGMT_URL";
        String tok = token();
        // per-request timeout: rdmablock.mgmt.timeoutMs (InitiatorConfiguration; the VM runner raises it, since the
        // first HTTP request of a JVM under TCG emulation can take longer)
        return new MgmtClient(MgmtClient.parseUrls(source, url == null || url.isBlank() ? DEFAULT_MGMT_URL : url),
                tok == null || tok.isBlank() ? null : tok,
                java.time.Duration.ofMillis(io.rdmablock.initiator.InitiatorConfiguration.current().mgmtTimeoutMs()),
                io.rdmablock.mgmt.client.TlsTrust.fromOptionOrEnv(caCert));
    }

    /** @return --token-file, else --token, else $RDMABLOCK_TOKEN, else $RDMABLOCK_READ_TOKEN; null or blank: none */
    private String token() {
        String tok = tokenFile != null ? readToken(tokenFile) : token != null ? token : System.getenv("RDMABLOCK_TOKEN");
        if (tok == null || tok.isBlank()) {
            tok = System.getenv("RDMABLOCK_READ_TOKEN"); // locating a volume only reads
        }
        return tok;
    }

    /** @return whether {@code token} is a host credential ({@code rbh1:<id>:<secret>}) */
    static boolean isHostCredential(String token) {
        return token != null && token.strip().startsWith("rbh1:");
    }

    private static String readToken(java.nio.file.Path file) {
        try {
            return java.nio.file.Files.readString(file).trim();
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("invalid --token-file: cannot read " + file + " (" + e + ")");
        }
    }

    /** The subnqn a volume name maps to (contract: one subsystem per volume). */
    static String subnqnOf(String volume) {
        return Volume.SUBNQN_PREFIX + volume;
    }
}
