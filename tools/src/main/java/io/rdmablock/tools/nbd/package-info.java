/**
 * NBD front-end: serves one {@link io.rdmablock.initiator.BlockDevice} over the Network Block Device protocol so stock
 * tools (fio's nbd engine, nbdcopy, nbdinfo, qemu-img, the Linux nbd client) work on rdmablock volumes.
 *
 * <p>Protocol source: NetworkBlockDevice/nbd {@code doc/proto.md} (fixed newstyle handshake, options EXPORT_NAME,
 * ABORT, LIST, INFO, GO; simple replies; commands READ, WRITE, DISC, FLUSH, TRIM, WRITE_ZEROES).
 * {@link io.rdmablock.tools.nbd.NbdServer} accepts connections; {@link io.rdmablock.tools.nbd.NbdHandshake}
 * negotiates; {@link io.rdmablock.tools.nbd.NbdConnection} runs the transmission phase with one reader and one
 * writer thread per connection and a preallocated slot per request in flight.
 *
 * <p>Owns the NBD server and {@code rdmablock nbd}. May import the initiator library's public API, {@link
 * io.rdmablock.tools.device}, picocli and the management client's {@code Json} (JSON output); no other tool package.
 */
package io.rdmablock.tools.nbd;
