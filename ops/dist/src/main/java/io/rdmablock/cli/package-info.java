/**
 * The one {@code rdmablock} command line (picocli): {@code mgmt} (run the management server), {@code volume}
 * and {@code node list|drain} (over REST through {@link io.rdmablock.mgmt.client.MgmtClient}), and the commands
 * that live in other modules ({@code node} itself from storage-node; {@code import}, {@code export}, {@code bench},
 * {@code nbd}, {@code replay} from tools), wired by {@link io.rdmablock.cli.RdmablockCli#commandLine()}. Exit codes:
 * {@link io.rdmablock.cli.ExitCodes}.
 */
package io.rdmablock.cli;
