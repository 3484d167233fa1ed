package io.rdmablock.cli;

import io.rdmablock.mgmt.client.Host;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.SetHostRequest;
import io.rdmablock.nvme.auth.DhchapSecret;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code rdmablock host set|list|get|remove}: hosts that must pass DH-HMAC-CHAP, with their secrets, over the
 * management REST API ({@code /v1/hosts}; docs/authentication.md, "Managed secrets"). A secret comes from, in this
 * order, {@code --dhchap-secret S}, {@code --dhchap-secret-file FILE} (first line, trimmed) or
 * {@code $RDMABLOCK_DHCHAP_SECRET}; the controller secret likewise ({@code --dhchap-ctrl-secret},
 * {@code --dhchap-ctrl-secret-file}, {@code $RDMABLOCK_DHCHAP_CTRL_SECRET}). A secret on the command line is
 * visible to other local users (ps, shell history): prefer the file or the environment. Secrets are checked here
 * ({@link DhchapSecret#parse}) before anything is sent; no output and no error message shows one.
 * {@code host credential ...}: the hosts' bearer tokens for the management API ({@link HostCredentialCommand}).
 */
@Command(name = "host", description = "Set, list, inspect and remove hosts' DH-HMAC-CHAP secrets (NVMe in-band "
        + "authentication); the nodes get them with their heartbeats.", mixinStandardHelpOptions = true,
        subcommands = {HostCommand.Set.class, HostCommand.ListHosts.class, HostCommand.Get.class,
                HostCommand.Remove.class, HostCredentialCommand.class})
public final class HostCommand implements Callable<Integer> {
    /** Environment variable of the host secret (the initiator reads the same). */
    static final String SECRET_ENV = "RDMABLOCK_DHCHAP_SECRET";
    /** Environment variable of the controller secret. */
    static final String CTRL_SECRET_ENV = "RDMABLOCK_DHCHAP_CTRL_SECRET";
    /** Environment the secrets are read from (tests replace it). */
    static Map<String, String> environment = System.getenv();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.BAD_INPUT;
    }

    static void print(PrintWriter out, OutputOptions output, List<Host> hosts) {
        if (output.json()) {
            out.println(Json.pretty(hosts));
            out.flush();
            return;
        }
        var table = new Table("HOSTNQN", "HASH", "KEY", "FINGERPRINT", "BIDIRECTIONAL", "REVISION", "UPDATED");
        for (Host h : hosts) {
            table.row(h.hostNqn(), h.hash(), h.keyBytes() * 8 + " bit", h.fingerprint(), h.bidirectional() ? "yes"
                    : "no", h.revision(), h.updatedAt());
        }
        table.print(out);
    }

    /**
     * @return the secret from the option, else the file, else the environment variable; null when none is given
     * @throws IllegalArgumentException naming the option when both the option and the file are given, the file
     *                                  cannot be read, or the secret is malformed (never showing it)
     */
    static String secret(String option, String value, String fileOption, Path file, String env) {
        if (value != null && file != null) {
            throw new IllegalArgumentException("invalid " + option + ": give " + option + " or " + fileOption
                    + ", not both");
        }
        String where = option;
        String text = value;
        if (file != null) {
            where = fileOption;
            try {
                List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
                text = lines.isEmpty() ? "" : lines.getFirst().trim();
            } catch (IOException e) {
                throw new IllegalArgumentException("invalid " + fileOption + ": cannot read " + file + " ("
                        + e.getClass().getSimpleName() + ")");
            }
        } else if (value == null) {
            where = "$" + env;
            text = environment.get(env);
            if (text == null || text.isBlank()) {
                return null;
            }
        }
        try {
            return DhchapSecret.parse(text.trim()).encoded();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid " + where + ": " + e.getMessage());
        }
    }

    /** A call about one host, named by its NQN ({@code HOSTNQN}, checked before anything is sent). */
    abstract static class OneHostCall extends MgmtCall {
        @Parameters(index = "0", paramLabel = "HOSTNQN", description = "The host NQN, e.g. "
                + "nqn.2014-08.org.nvmexpress:uuid:UUID (nvme show-hostnqn).")
        String hostNqn;

        String hostNqn() {
            Limits.checkHostNqn("HOSTNQN", hostNqn);
            return hostNqn;
        }
    }

    @Command(name = "set", description = "Set (create or replace) a host's secrets. Connections made afterwards use "
            + "them; connected queues stay.", mixinStandardHelpOptions = true)
    static final class Set extends OneHostCall {
        @Option(names = "--dhchap-secret", paramLabel = "DHHC-1:..", description = "The host secret (nvme "
                + "gen-dhchap-key); visible in ps: prefer --dhchap-secret-file or $" + SECRET_ENV + ".")
        String secret;

        @Option(names = "--dhchap-secret-file", paramLabel = "FILE", description = "File whose first line is the "
                + "host secret.")
        Path secretFile;

        @Option(names = "--dhchap-ctrl-secret", paramLabel = "DHHC-1:..", description = "The controller secret, for "
                + "bidirectional authentication (or --dhchap-ctrl-secret-file, $" + CTRL_SECRET_ENV + ").")
        String ctrlSecret;

        @Option(names = "--dhchap-ctrl-secret-file", paramLabel = "FILE", description = "File whose first line is "
                + "the controller secret.")
        Path ctrlSecretFile;

        @Override
        public Integer call() {
            String nqn = hostNqn();
            String s = secret("--dhchap-secret", secret, "--dhchap-secret-file", secretFile, SECRET_ENV);
            if (s == null) {
                throw new IllegalArgumentException("invalid --dhchap-secret: a host secret is required "
                        + "(--dhchap-secret, --dhchap-secret-file or $" + SECRET_ENV + ")");
            }
            String c = secret("--dhchap-ctrl-secret", ctrlSecret, "--dhchap-ctrl-secret-file", ctrlSecretFile,
                    CTRL_SECRET_ENV);
            print(out(), output, List.of(client().setHost(nqn, new SetHostRequest(s, c))));
            return ExitCodes.OK;
        }
    }

    @Command(name = "list", description = "List the hosts with secrets (never the secrets).",
            mixinStandardHelpOptions = true)
    static final class ListHosts extends MgmtCall {
        @Override
        public Integer call() {
            print(out(), output, client().listHosts());
            return ExitCodes.OK;
        }
    }

    @Command(name = "get", description = "Show one host (never its secrets).", mixinStandardHelpOptions = true)
    static final class Get extends OneHostCall {
        @Override
        public Integer call() {
            print(out(), output, List.of(client().getHost(hostNqn())));
            return ExitCodes.OK;
        }
    }

    @Command(name = "remove", description = "Forget a host's secrets: it connects without authentication again "
            + "(volumes created with --require-auth then refuse it).", mixinStandardHelpOptions = true)
    static final class Remove extends OneHostCall {
        @Override
        public Integer call() {
            String nqn = hostNqn();
            client().removeHost(nqn);
            if (output.json()) {
                out().println(Json.write(Map.of("removed", nqn)));
            } else {
                out().println("host " + nqn + " removed");
            }
            out().flush();
            return ExitCodes.OK;
        }
    }
}
