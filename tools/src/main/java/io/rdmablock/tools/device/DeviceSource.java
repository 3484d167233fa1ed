package io.rdmablock.tools.device;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.local.FileBlockDevice;
import io.rdmablock.tools.device.ConnectOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * How a command-line front-end (bench, nbd, replay) obtains its {@link BlockDevice}: a picocli mixin with two
 * mutually exclusive sources, checked by {@link #open(int)}.
 *
 * <ul>
 *   <li>a volume on a storage node: the {@link ConnectOptions} ({@code --volume NAME} through the management server,
 *       or {@code --address host:port --subnqn NQN}; {@code --hostnqn}, {@code --provider}, {@code --io-queues});</li>
 *   <li>{@code --file PATH [--lba-size 512|4096] [--direct=true|false] [--file-threads N]}: a local file
 *       ({@link FileBlockDevice}), the baseline and the test backing.</li>
 * </ul>
 */
public final class DeviceSource {

    @Mixin
    ConnectOptions remote = new ConnectOptions();

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

    /** A short human name of the device source: the volume name, NQN, address or file name. */
    public String displayName() {
        if (file != null) {
            return file.getFileName().toString();
        }
        String remoteName = remote.displayName();
        return remoteName != null ? remoteName : "?";
    }

    /**
     * The storage node's fabric address {@code host:port} ({@link ConnectOptions#nodeAddress()}); null for a file or
     * when the management server cannot be asked.
     */
    public String nodeAddress() {
        return file != null ? null : remote.nodeAddress();
    }

    /**
     * Opens the device.
     *
     * @param ioQueues I/O queue pairs wanted (one per benchmark job); a --file device ignores it
     * @throws IllegalArgumentException when no source or both are given, or a source is incomplete
     * @throws io.rdmablock.initiator.BlockIoException when the node cannot be reached (see NvmeBlockDevice#open)
     */
    public BlockDevice open(int ioQueues) {
        int sources = (remote.given() ? 1 : 0) + (file != null ? 1 : 0);
        if (sources != 1) {
            throw new IllegalArgumentException("invalid device: give exactly one of --volume, --address/--subnqn or "
                    + "--file (got " + (sources == 0 ? "none" : "a volume and a file") + ")");
        }
        if (file != null) {
            if (!Files.exists(file)) {
                throw new IllegalArgumentException("invalid --file: " + file + " does not exist");
            }
            return new FileBlockDevice(file, lbaSize, direct, fileThreads);
        }
        return remote.open(ioQueues);
    }

    public Path file() {
        return file;
    }

    /** The --io-queues value. */
    public int ioQueues() {
        return remote.ioQueues();
    }
}
