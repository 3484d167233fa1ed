/**
 * Local {@link io.rdmablock.initiator.BlockDevice} implementations and the command-line glue that opens a device.
 *
 * <p>{@link io.rdmablock.initiator.local.FileBlockDevice} serves a block device from a local file (optionally with
 * {@code O_DIRECT}); it is the baseline the benchmark compares against and the backing the NBD front-end and the
 * benchmark are tested on when no storage node runs. {@link io.rdmablock.initiator.local.DeviceSource} is the
 * picocli mixin of the front-ends: {@code --file} options plus the one remote set,
 * {@link io.rdmablock.initiator.cli.ConnectOptions} ({@code --volume}, {@code --address}/{@code --subnqn}, ...).
 */
package io.rdmablock.initiator.local;
