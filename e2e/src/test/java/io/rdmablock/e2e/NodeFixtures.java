package io.rdmablock.e2e;

import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.node.NodeConfig;
import io.rdmablock.node.StorageNode;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.node.target.TargetOptions;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * End-to-end test environment: providers from {@code rdmablock.test.providers} (comma list, default {@code soft}),
 * node address from {@code rdmablock.test.address} (default {@code 127.0.0.1}), so the VM runner can run the same
 * tests on rxe and siw.
 */
final class NodeFixtures {
    private NodeFixtures() {
    }

    static Stream<String> providers() {
        return Arrays.stream(System.getProperty("rdmablock.test.providers", "soft").split(","))
                .map(String::trim).filter(s -> !s.isEmpty());
    }

    /**
     * Class path for a child JVM: {@code rdmablock.test.classpath} when set (the VM runner starts tests through the
     * JUnit console launcher, whose {@code java.class.path} is the launcher jar alone), else {@code java.class.path}.
     */
    static String childClasspath() {
        String cp = System.getProperty("rdmablock.test.classpath", "");
        return cp.isBlank() ? System.getProperty("java.class.path") : cp;
    }

    static String host() {
        return System.getProperty("rdmablock.test.address", "127.0.0.1");
    }

    /** Starts an in-process node on {@code port} (0 = any) of the test address. */
    static StorageNode startNode(Path dataDir, String provider, int port) {
        NodeConfig c = new NodeConfig(dataDir, new InetSocketAddress(host(), port), provider, null, null, "node-e2e",
                null, null, 1000, List.of(), TargetOptions.defaults());
        return new StorageNode(c).start();
    }

    static String subnqn(String volume) {
        return Subsystem.nqnFor(volume);
    }

    static NvmeBlockDevice open(StorageNode node, String provider, String volume, DeviceOptions opts) {
        return NvmeBlockDevice.open(node.fabricAddress(), subnqn(volume), null, opts.providerMode(provider));
    }
}
