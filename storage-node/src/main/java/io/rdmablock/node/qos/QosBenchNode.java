package io.rdmablock.node.qos;

import io.rdmablock.mgmt.client.VolumeQos;
import io.rdmablock.node.NodeConfiguration;
import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.node.target.Target;
import io.rdmablock.node.target.TargetOptions;
import io.rdmablock.rdma.verbs.Providers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;

/**
 * A storage node's target for the end-to-end QoS benchmarks (ops/bench/neighbour; not a test): the soft provider,
 * the default target options (2 pollers), a file store in {@code dir}, one volume per name given, any host, no
 * management server. Its limits are set from standard input, one command a line:
 * <ul>
 *   <li>{@code qos VOLUME iops=N bytesPerSec=N} (rates per second, 0 = none; each field optional, the others 0):
 *       {@link VolumeQosLimiter#apply}, as a heartbeat answer would; answers {@code ok};</li>
 *   <li>{@code held VOLUME}: answers {@code held=N delayedSeconds=S} for the volume now.</li>
 * </ul>
 * Prints {@code ready PORT} once listening; ends at end of input (the volumes' files stay in {@code dir}).
 *
 * <p>Arguments: {@code dir port sizeMiB volume...}; port 0 = any.
 */
public final class QosBenchNode {
    private QosBenchNode() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 4) {
            System.err.println("usage: QosBenchNode DIR PORT SIZE_MIB VOLUME...");
            System.exit(2);
        }
        long sizeBytes = Long.parseLong(args[2]) << 20;
        NodeConfiguration configuration = NodeConfiguration.fromSystemProperties();
        VolumeStore store = VolumeStore.open(Path.of(args[0]), configuration.storeOptions());
        Target target = new Target(Providers.select("soft"), store, TargetOptions.defaults(), new NodeMetrics(),
                configuration.target(), io.rdmablock.node.io.LocalVolumeIo::open);
        target.start(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1])));
        for (int i = 3; i < args.length; i++) {
            String name = args[i];
            var volume = store.list().stream().anyMatch(v -> v.id().equals(name)) ? store.get(name)
                    : store.create(new VolumeSpec(name, name, sizeBytes, 512, Set.of(VolumeSpec.ANY_HOST)));
            target.addVolume(volume, null);
        }
        System.out.println("ready " + target.localAddress().getPort());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            String line;
            while ((line = in.readLine()) != null) {
                System.out.println(command(target, line.trim().split("\\s+")));
                System.out.flush();
            }
        } finally {
            target.close();
            store.close();
        }
    }

    private static String command(Target target, String[] words) {
        if (words.length < 2) {
            return "error: expected 'qos VOLUME [iops=N] [bytesPerSec=N]' or 'held VOLUME'";
        }
        Subsystem s = target.subsystemOfVolume(words[1]);
        if (s == null) {
            return "error: no volume " + words[1];
        }
        switch (words[0]) {
            case "held" -> {
                return "held=" + s.qos().heldCommands() + " delayedSeconds=" + s.qos().delayedSeconds();
            }
            case "qos" -> {
                long iops = 0;
                long bytes = 0;
                for (int i = 2; i < words.length; i++) {
                    String[] kv = words[i].split("=", 2);
                    long v = kv.length == 2 ? Long.parseLong(kv[1]) : -1;
                    switch (kv[0]) {
                        case "iops" -> iops = v;
                        case "bytesPerSec" -> bytes = v;
                        default -> {
                            return "error: unknown field " + words[i] + " (iops=N, bytesPerSec=N)";
                        }
                    }
                }
                s.qos().apply(new VolumeQos(iops, 0, 0, bytes, 0, 0, 0, 0, 0, 0), s.volume().sizeBytes());
                return "ok";
            }
            default -> {
                return "error: unknown command " + words[0];
            }
        }
    }
}
