/**
 * {@code rdmablock import} and {@code rdmablock export} (picocli): {@link io.rdmablock.tools.copy.ImportCommand} and
 * {@link io.rdmablock.tools.copy.ExportCommand} copy a raw image into / out of a volume through
 * {@link io.rdmablock.initiator.BlockDevice}, pipelined by {@link io.rdmablock.tools.copy.ImageCopy}.
 *
 * <p>Owns the image copy and its options. May import the initiator library's public API, {@link
 * io.rdmablock.tools.device} (the volume is reached through {@link io.rdmablock.tools.device.ConnectOptions}),
 * picocli and the management client's {@code Json} (JSON output); no other tool package.
 */
package io.rdmablock.tools.copy;
