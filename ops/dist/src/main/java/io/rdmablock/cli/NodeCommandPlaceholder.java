package io.rdmablock.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * Stands for {@code rdmablock node} (run a storage node) while {@code io.rdmablock.node.NodeCommand} is not on
 * the classpath. It declares the options that {@code ops/cluster} passes, so the contract is visible in
 * {@code --help}, and fails with exit code 1.
 */
@Command(name = "node", description = "Run a storage node (or: node list | drain | undrain | rotate-key | remove).",
        mixinStandardHelpOptions = true)
final class NodeCommandPlaceholder implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", required = true, paramLabel = "DIR", description = "Volume data and node metadata.")
    Path dataDir;
    @Option(names = "--listen", paramLabel = "HOST:PORT", description = "Fabric listen address.")
    String listen;
    @Option(names = "--provider", paramLabel = "auto|soft|ffm|memory", description = "RDMA verbs provider (memory: one JVM only).")
    String provider;
    @Option(names = "--mgmt-url", paramLabel = "URL[,URL...]",
            description = "Management server URL, or a comma-separated list of several.")
    String mgmtUrl;
    @Option(names = "--token", paramLabel = "TOKEN", description = "Cluster token.")
    String token;
    @Option(names = "--token-file", paramLabel = "FILE", description = "Cluster token file.")
    Path tokenFile;
    @Option(names = "--node-id", paramLabel = "ID", description = "Node id (default: the data dir name).")
    String nodeId;
    @Option(names = "--capacity", paramLabel = "SIZE", description = "Capacity offered for volumes.")
    String capacity;

    @Override
    public Integer call() {
        spec.commandLine().getErr().println("rdmablock: error: the storage node (io.rdmablock.node.NodeCommand) is "
                + "not part of this build yet; 'rdmablock node list|drain|undrain|rotate-key|remove' work");
        spec.commandLine().getErr().flush();
        return ExitCodes.FAILED;
    }
}
