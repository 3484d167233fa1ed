package io.rdmablock.cli;

import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.NodeAgent;
import io.rdmablock.mgmt.client.RegisterNodeRequest;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * A stand-in for {@code rdmablock node} in {@link ClusterScriptTest}: parses the options ops/cluster passes
 * ({@code --data-dir --listen --provider --mgmt-url --token-file --node-id --metrics-listen}), registers with that node id
 * and heartbeats until killed. Its name starts with {@code RdmablockCli} because ops/cluster only signals
 * processes whose command line names {@code io.rdmablock.cli.RdmablockCli}.
 */
public final class RdmablockCliFakeNode {
    private RdmablockCliFakeNode() {
    }

    public static void main(String[] args) throws Exception {
        String dataDir = null;
        String listen = null;
        String mgmtUrl = null;
        String tokenFile = null;
        String nodeId = null;
        String metricsUrl = "";
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--data-dir" -> dataDir = args[i + 1];
                case "--listen" -> listen = args[i + 1];
                case "--mgmt-url" -> mgmtUrl = args[i + 1];
                case "--token-file" -> tokenFile = args[i + 1];
                case "--provider", "--ca-cert" -> { }
                case "--node-id" -> nodeId = args[i + 1];
                case "--metrics-listen" -> metricsUrl = "http://" + args[i + 1] + "/metrics";
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Files.createDirectories(Path.of(dataDir));
        if (nodeId == null) {
            nodeId = Path.of(dataDir).getFileName().toString();
        }
        // ops/cluster passes every management URL, comma-separated
        var client = new MgmtClient(MgmtClient.parseUrls("--mgmt-url", mgmtUrl),
                Files.readString(Path.of(tokenFile)).trim(), java.time.Duration.ofSeconds(10), null);
        var registration = new RegisterNodeRequest(nodeId, listen, metricsUrl, 1L << 30, 1L << 30);
        var agent = new NodeAgent(client, () -> registration, new NodeAgent.Handler() {
            @Override
            public HeartbeatRequest report() {
                return new HeartbeatRequest(1L << 30, List.of());
            }

            @Override
            public void apply(HeartbeatResponse desired) {
            }
        }, 500).start();
        Runtime.getRuntime().addShutdownHook(new Thread(agent::close));
        new CountDownLatch(1).await();
    }
}
