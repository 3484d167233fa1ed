package io.rdmablock.initiator.local;

import io.rdmablock.initiator.BlockDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * How a command-line front-end obtains its {@link BlockDevice}: a picocli mixin with three mutually exclusive
 * sources, checked by {@link #open(int)}.
 *
 * <ul>
 *   <li>{@code --volume NAME [--mgmt-url URL] [--token T]}: look the volume up through the management REST API and
 *       connect to the node that exports it;</li>
 *   <li>{@code --address host:port --subnqn NQN}: connect directly to a storage node's subsystem;</li>
 *   <li>{@code --file PATH [--lba-size 512|4096] [--direct=true|false]}: a local file ({@link FileBlockDevice}), the
 *       baseline and the test backing.</li>
 * </ul>
 */
public final class DeviceOptions {

    @Option(names = "--volume", paramLabel = "NAME", description = "Volume name, looked up through the management REST API.")
    String volume;

    @Option(names = "--mgmt-url", paramLabel = "URL", defaultValue = "${env:RDMABLOCK_MGMT_URL:-http://127.0.0.1:8080}",
            description = "Management REST base URL (default: ${DEFAULT-VALUE}).")
    String mgmtUrl;

    @Option(names = "--token", paramLabel = "T", defaultValue = "${env:RDMABLOCK_TOKEN}",
            description = "Bearer token for the management REST API (default: $RDMABLOCK_TOKEN).")
    String token;

    @Option(names = "--address", paramLabel = "HOST:PORT", description = "Storage node fabric address (direct connect).")
    String address;

    @Option(names = "--subnqn", paramLabel = "NQN", description = "Subsystem NQN on the node (with --address).")
    String subnqn;

    @Option(names = "--hostnqn", paramLabel = "NQN", description = "Host NQN (default: a random UUID-based NQN).")
    String hostnqn;

    @Option(names = "--provider", paramLabel = "auto|soft|ffm",
            description = "Verbs provider (default: $RDMABLOCK_RDMA_PROVIDER or auto).")
    String provider;

    @Option(names = "--io-queues", paramLabel = "N", defaultValue = "2",
            description = "I/O queue pairs of the device (nbd; bench opens one per job) (default: ${DEFAULT-VALUE}).")
    int ioQueues;

    @Option(names = "--file", paramLabel = "PATH", description = "Local file as the block device (baseline/testing).")
    Path file;

    @Option(names = "--lba-size", paramLabel = "BYTES", defaultValue = "512",
            description = "LBA size of a --file device: 512 or 4096 (default: ${DEFAULT-VALUE}).")
    int lbaSize;

    @Option(names = "--direct", paramLabel = "BOOL", defaultValue = "true", arity = "0..1",
            description = "Open a --file device with O_DIRECT (default: ${DEFAULT-VALUE}).")
    boolean direct;

    @Option(names = "--file-threads", paramLabel = "N", defaultValue = "32",
            description = "I/O threads of a --file device = its maximum queue depth (default: ${DEFAULT-VALUE}).")
    int fileThreads;

    /** A short human name of the device source: the volume name, NQN or file name. */
    public String displayName() {
        if (volume != null) {
            return volume;
        }
        if (address != null) {
            return subnqn != null ? subnqn : address;
        }
        return file != null ? file.getFileName().toString() : "?";
    }

    /**
     * The storage node's fabric address {@code host:port}: {@code --address}, or for {@code --volume} the address the
     * management server reports (null when it cannot be asked); null for a file.
     */
    public String nodeAddress() {
        if (address != null) {
            return address;
        }
        if (volume == null) {
            return null;
        }
        try {
            String url = mgmtUrl == null || mgmtUrl.isBlank() ? "http://127.0.0.1:8080" : mgmtUrl;
            return new io.rdmablock.mgmt.client.MgmtClient(java.net.URI.create(url), token == null || token.isBlank()
                    ? null : token).getVolume(volume).fabricAddress();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * Opens the device.
     *
     * @param ioQueues I/O queue pairs wanted (one per benchmark job); a --file device ignores it
     * @throws IllegalArgumentException when no source or more than one is given, or a source is incomplete
     * @throws io.rdmablock.initiator.BlockIoException when the node cannot be reached (see NvmeBlockDevice#open)
     */
    public BlockDevice open(int ioQueues) {
        int sources = (volume != null ? 1 : 0) + (address != null ? 1 : 0) + (file != null ? 1 : 0);
        if (sources != 1) {
            throw new IllegalArgumentException("invalid device: give exactly one of --volume, --address or --file (got " + sources + ")");
        }
        if (file != null) {
            if (!Files.exists(file)) {
                throw new IllegalArgumentException("invalid --file: " + file + " does not exist");
            }
            return new FileBlockDevice(file, lbaSize, direct, fileThreads);
        }
        if (address != null && subnqn == null) {
            throw new IllegalArgumentException("invalid device: --address needs --subnqn");
        }
        return RemoteDevices.open(this, ioQueues);
    }

    public String volume() {
        return volume;
    }

    public String mgmtUrl() {
        return mgmtUrl;
    }

    public String token() {
        return token;
    }

    public String address() {
        return address;
    }

    public String subnqn() {
        return subnqn;
    }

    public Path file() {
        return file;
    }

    public String hostnqn() {
        return hostnqn;
    }

    public String provider() {
        return provider;
    }

    /** The --io-queues value. */
    public int ioQueues() {
        return ioQueues;
    }
}
