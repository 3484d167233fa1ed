package io.rdmablock.cli;

import io.rdmablock.mgmt.client.HostCredential;
import io.rdmablock.mgmt.client.IssuedHostCredential;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Limits;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code rdmablock host credential create|list|revoke}: host credentials ({@code /v1/host-credentials};
 * docs/authentication.md, "Credentials and scopes"), bearer tokens {@code rbh1:<id>:<secret>} bound to one host NQN
 * that only read the volumes admitting that NQN and report their copies unreachable: what an initiator host holds
 * instead of the cluster token ({@code rdmablock-initiator ... --token-file FILE --hostnqn NQN}). {@code create}
 * prints the credential once (or writes it, mode 0600, to {@code --credential-file}); nothing else ever shows it.
 */
@Command(name = "credential", description = "Issue, list and revoke host credentials: tokens that let one host NQN "
        + "read the volumes that admit it and report their copies unreachable, nothing else.",
        mixinStandardHelpOptions = true, subcommands = {HostCredentialCommand.Create.class,
                HostCredentialCommand.ListCredentials.class, HostCredentialCommand.Revoke.class})
public final class HostCredentialCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.BAD_INPUT;
    }

    @Command(name = "create", description = "Issue a host credential for one host NQN; prints it once (the server "
            + "keeps only its hash).", mixinStandardHelpOptions = true)
    static final class Create extends MgmtCall {
        @Option(names = "--host-nqn", required = true, paramLabel = "NQN", description = "The host NQN the "
                + "credential acts for (the initiator's --hostnqn), e.g. nqn.2014-08.org.nvmexpress:uuid:UUID.")
        String hostNqn;

        @Option(names = "--credential-file", paramLabel = "FILE", description = "Write the credential to FILE "
                + "(mode 0600, replaced atomically) instead of printing it.")
        Path credentialFile;

        @Override
        public Integer call() {
            Limits.checkHostNqn("--host-nqn", hostNqn);
            IssuedHostCredential issued = client().issueHostCredential(hostNqn);
            if (credentialFile != null) {
                try {
                    Tokens.write(credentialFile, issued.credential());
                } catch (IOException e) {
                    throw new UncheckedIOException("host credential " + issued.id() + " issued, but writing "
                            + credentialFile + " failed (revoke it: host credential revoke " + issued.id() + ")", e);
                }
            }
            if (output.json()) {
                out().println(Json.pretty(credentialFile == null ? issued
                        : new HostCredential(issued.id(), issued.hostNqn(), issued.createdAt())));
            } else if (credentialFile != null) {
                out().println("host credential " + issued.id() + " for " + issued.hostNqn() + " written to "
                        + credentialFile);
            } else {
                out().println("host credential " + issued.id() + " for " + issued.hostNqn()
                        + " (shown once; the server keeps only its hash):");
                out().println(issued.credential());
            }
            out().flush();
            return ExitCodes.OK;
        }
    }

    @Command(name = "list", description = "List host credentials (ids and host NQNs, never the credentials).",
            mixinStandardHelpOptions = true)
    static final class ListCredentials extends MgmtCall {
        @Override
        public Integer call() {
            List<HostCredential> all = client().listHostCredentials();
            if (output.json()) {
                out().println(Json.pretty(all));
                out().flush();
                return ExitCodes.OK;
            }
            var table = new Table("ID", "HOSTNQN", "CREATED");
            for (HostCredential c : all) {
                table.row(c.id(), c.hostNqn(), c.createdAt());
            }
            table.print(out());
            return ExitCodes.OK;
        }
    }

    @Command(name = "revoke", description = "Revoke a host credential: from its next request on it is refused (401).",
            mixinStandardHelpOptions = true)
    static final class Revoke extends MgmtCall {
        @Parameters(index = "0", paramLabel = "ID", description = "The credential's id (host credential list).")
        String id;

        @Override
        public Integer call() {
            Limits.checkName("ID", id);
            client().revokeHostCredential(id);
            if (output.json()) {
                out().println(Json.write(Map.of("revoked", id)));
            } else {
                out().println("host credential " + id + " revoked");
            }
            out().flush();
            return ExitCodes.OK;
        }
    }
}
