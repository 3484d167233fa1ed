/**
 * Local {@link io.rdmablock.initiator.BlockDevice} implementations.
 *
 * <p>{@link io.rdmablock.initiator.local.FileBlockDevice} serves a block device from a local file (optionally with
 * {@code O_DIRECT}); it is the baseline the benchmark compares against and the backing the NBD front-end and the
 * benchmark are tested on when no storage node runs. The command-line glue that opens one ({@code --file}) lives with
 * the tools ({@code io.rdmablock.tools.device.DeviceSource}, module {@code tools}).
 */
package io.rdmablock.initiator.local;
