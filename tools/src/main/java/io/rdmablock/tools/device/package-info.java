/**
 * How a command-line tool reaches its {@link io.rdmablock.initiator.BlockDevice} (picocli mixins shared by every
 * tool): {@link io.rdmablock.tools.device.ConnectOptions} is the one set of options for a volume on a storage node
 * (by name through the management server, or directly by fabric address and subnqn); {@link
 * io.rdmablock.tools.device.DeviceSource} adds a local file ({@link io.rdmablock.initiator.local.FileBlockDevice}) as
 * the other source (bench, nbd, replay).
 *
 * <p>Owns the command-line device options only. May import the initiator library's public API, the management client
 * ({@code io.rdmablock.mgmt.client}, to look a volume up), {@code DhchapSecret} and picocli; no other tool package
 * (the tools import this one).
 */
package io.rdmablock.tools.device;
