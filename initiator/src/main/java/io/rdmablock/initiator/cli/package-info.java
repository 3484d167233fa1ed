/**
 * The initiator's subcommands of the {@code rdmablock} CLI (picocli): {@link io.rdmablock.initiator.cli.ImportCommand}
 * and {@link io.rdmablock.initiator.cli.ExportCommand} copy a raw image into / out of a volume through
 * {@link io.rdmablock.initiator.BlockDevice}; {@link io.rdmablock.initiator.cli.ConnectOptions} is the shared way to
 * reach a volume (by name through the management server, or directly by fabric address and subnqn).
 */
package io.rdmablock.initiator.cli;
