package io.rdmablock.initiator.cli;

import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.Volume;
import picocli.CommandLine.Option;

import java.net.URI;

/**
 * How a command reaches a volume (picocli mixin): {@code --volume NAME} through the management server
 * ({@code --mgmt-url}, {@code --token}; environment {@code RDMABLOCK_MGMT_URL}, {@code RDMABLOCK_TOKEN}), or directly
 * with {@code --address host:port --subnqn NQN} (no management server).
 */
public final class ConnectOptions {
    @Option(names = "--volume", paramLabel = "NAME", description = "Volume name (looked up on the management server).")
    String volume;

    @Option(names = "--mgmt-url", paramLabel = "URL",
            description = "Management server URL (default: $RDMABLOCK_MGMT_URL, else http://127.0.0.1:8080).")
    String mgmtUrl;

    @Option(names = "--token", paramLabel = "TOKEN", description = "Bearer token (default: $RDMABLOCK_TOKEN).")
    String token;

    @Option(names = "--address", paramLabel = "HOST:PORT",
            description = "Storage node fabric address; with --subnqn, connects without the management server.")
    String address;

    @Option(names = "--subnqn", paramLabel = "NQN", description = "Subsystem NQN of the volume (with --address).")
    String subnqn;

    @Option(names = "--hostnqn", paramLabel = "NQN", description = "Host NQN (default: a random UUID-based NQN).")
    String hostnqn;

    @Option(names = "--provider", paramLabel = "auto|soft|ffm", description = "Verbs provider (default: $RDMABLOCK_RDMA_PROVIDER or auto).")
    String provider;

    @Option(names = "--io-queues", paramLabel = "N", defaultValue = "2", description = "I/O queues (default: ${DEFAULT-VALUE}).")
    int ioQueues;

    /**
     * Opens the volume.
     *
     * @throws IllegalArgumentException when neither --volume nor --address/--subnqn (or both) are given
     */
    public NvmeBlockDevice open() {
        DeviceOptions opts = DeviceOptions.defaults().ioQueues(ioQueues).providerMode(provider);
        if (address != null || subnqn != null) {
            if (address == null || subnqn == null) {
                throw new IllegalArgumentException("--address and --subnqn go together");
            }
            if (volume != null && !subnqn.endsWith(":" + volume)) {
                throw new IllegalArgumentException("--volume " + volume + " does not match --subnqn " + subnqn);
            }
            return NvmeBlockDevice.open(VolumeLocator.parseAddress(address), subnqn, hostnqn, opts);
        }
        if (volume == null) {
            throw new IllegalArgumentException("give --volume NAME, or --address HOST:PORT and --subnqn NQN");
        }
        return VolumeLocator.open(mgmtClient(), volume, hostnqn, opts);
    }

    /** What to call the target in messages. */
    public String describe() {
        return volume != null ? "volume " + volume : subnqn + " at " + address;
    }

    MgmtClient mgmtClient() {
        String url = mgmtUrl != null ? mgmtUrl : System.getenv("RDMABLOCK_MGMT_URL");
        String tok = token != null ? token : System.getenv("RDMABLOCK_TOKEN");
        return new MgmtClient(URI.create(url == null || url.isBlank() ? "http://127.0.0.1:8080" : url), tok);
    }

    /** The subnqn a volume name maps to (contract: one subsystem per volume). */
    static String subnqnOf(String volume) {
        return Volume.SUBNQN_PREFIX + volume;
    }
}
