package io.rdmablock.cli;

import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.MgmtUnavailableException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;

/**
 * {@code rdmablock}: the one command line of the project.
 *
 * <p>Built-in subcommands: {@code mgmt}, {@code volume create|list|get|resize|delete}, {@code node list|drain}.
 * Subcommands living in other modules are listed in {@link #MODULE_COMMANDS} and added when their class is on the
 * classpath: each must be a picocli {@code @Command} class with a public no-argument constructor, implementing
 * {@code Callable<Integer>} (the exit code). The storage node's {@code NodeCommand} becomes {@code rdmablock node}
 * and keeps {@code list} and {@code drain} as its subcommands.
 *
 * <p>Errors: a bad option prints {@code rdmablock: invalid <field>: ...} (field and bounds) and exits 2; see
 * {@link ExitCodes} for the rest.
 */
@Command(name = "rdmablock", mixinStandardHelpOptions = true, versionProvider = RdmablockCli.Version.class,
        description = "Distributed block storage over an NVMe-oF-style protocol on RDMA.",
        subcommands = {MgmtCommand.class, VolumeCommand.class})
public final class RdmablockCli implements Callable<Integer> {
    /**
     * Subcommands provided by other modules: name → class. Add a line here when a module gains a command.
     * The classes are looked up reflectively so that this module builds while they are being written.
     */
    public static final Map<String, String> MODULE_COMMANDS = moduleCommands();

    @Spec
    CommandSpec spec;

    private static Map<String, String> moduleCommands() {
        var m = new LinkedHashMap<String, String>();
        m.put("node", "io.rdmablock.node.NodeCommand");                // storage-node: run a storage node
        m.put("import", "io.rdmablock.initiator.cli.ImportCommand");   // initiator: raw image file → volume
        m.put("export", "io.rdmablock.initiator.cli.ExportCommand");   // initiator: volume → raw image file
        m.put("bench", "io.rdmablock.initiator.bench.BenchCommand");   // initiator: fio-style benchmark
        m.put("nbd", "io.rdmablock.initiator.nbd.NbdCommand");         // initiator: NBD export of a volume
        m.put("replay", "io.rdmablock.initiator.replay.ReplayCommand"); // initiator: verified block-trace replay
        return Map.copyOf(m);
    }

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.BAD_INPUT;
    }

    /** @return the configured command line (all subcommands, error handlers); set out/err after this if needed */
    public static CommandLine commandLine() {
        var root = new CommandLine(new RdmablockCli());
        for (String name : new String[] {"node", "import", "export", "bench", "nbd", "replay"}) {
            Object command = instantiate(MODULE_COMMANDS.get(name));
            if ("node".equals(name)) {
                var node = new CommandLine(command != null ? command : new NodeCommandPlaceholder());
                node.addSubcommand("list", new NodeAdminCommands.ListNodes());
                node.addSubcommand("drain", new NodeAdminCommands.Drain());
                node.addSubcommand("undrain", new NodeAdminCommands.Undrain());
                node.addSubcommand("remove", new NodeAdminCommands.Remove());
                RequiredUnlessSubcommand.apply(node);
                root.addSubcommand("node", node);
            } else if (command != null) {
                root.addSubcommand(name, command);
            }
        }
        root.addSubcommand(new CommandLine.HelpCommand());
        root.setExecutionStrategy(RequiredUnlessSubcommand.strategy(new CommandLine.RunLast()));
        root.setParameterExceptionHandler(RdmablockCli::usageError);
        root.setExecutionExceptionHandler(RdmablockCli::failure);
        return root;
    }

    /** @return a new instance of the class, or null when it is not on the classpath */
    static Object instantiate(String className) {
        try {
            return Class.forName(className).getConstructor().newInstance();
        } catch (ClassNotFoundException e) {
            return null;
        } catch (NoSuchMethodException | InstantiationException | IllegalAccessException
                 | InvocationTargetException e) {
            throw new IllegalStateException("cannot create command " + className + ": " + e, e);
        }
    }

    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        err.println("rdmablock: " + e.getMessage());
        err.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for usage.");
        err.flush();
        return ExitCodes.BAD_INPUT;
    }

    private static int failure(Exception e, CommandLine cmd, CommandLine.ParseResult parsed) {
        PrintWriter err = cmd.getErr();
        int code;
        if (e instanceof IllegalArgumentException) {
            err.println("rdmablock: " + e.getMessage());
            code = ExitCodes.BAD_INPUT;
        } else if (e instanceof MgmtException m) {
            var p = m.problem();
            err.println("rdmablock: " + p.title() + " (" + p.status() + "): " + p.detail());
            code = p.status() == 400 || p.status() == 413 || p.status() == 415 ? ExitCodes.BAD_INPUT : ExitCodes.FAILED;
        } else if (e instanceof MgmtUnavailableException u) {
            err.println("rdmablock: management server unavailable (is it running? see --mgmt-url): " + u.getMessage());
            code = ExitCodes.UNAVAILABLE;
        } else {
            err.println("rdmablock: error: " + e);
            code = ExitCodes.FAILED;
        }
        err.flush();
        return code;
    }

    /** Entry point of {@code ops/bin/rdmablock}. */
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** {@code --version}: the Maven project version. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            var props = new Properties();
            try (InputStream in = RdmablockCli.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    props.load(in);
                }
            }
            return new String[] {"rdmablock " + props.getProperty("version", "unknown"),
                    "Java " + Runtime.version()};
        }
    }
}
