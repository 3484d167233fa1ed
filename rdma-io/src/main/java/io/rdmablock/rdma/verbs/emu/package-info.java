/**
 * The shared implementation of the two emulated verbs providers, {@code soft} ({@link io.rdmablock.rdma.verbs.soft})
 * and {@code memory} ({@link io.rdmablock.rdma.verbs.memory}): the device with its memory-region key table
 * ({@link io.rdmablock.rdma.verbs.emu.EmuDevice}), protection domains ({@link io.rdmablock.rdma.verbs.emu.EmuPd}),
 * memory regions ({@link io.rdmablock.rdma.verbs.emu.EmuMr}) with the key and SGE checks, the completion ring
 * behind both completion queues ({@link io.rdmablock.rdma.verbs.emu.EmuCqRing}), the checks of queue-pair attributes
 * ({@link io.rdmablock.rdma.verbs.emu.EmuQpAttrs}) and the provider's table of open resources
 * ({@link io.rdmablock.rdma.verbs.emu.EmuResources}). The classes are public only so that both provider packages can
 * use them; they are not an API for users, who reach them through {@link io.rdmablock.rdma.verbs.VerbsProvider}.
 * All are final classes called directly, so the post and poll paths of both providers stay monomorphic.
 */
package io.rdmablock.rdma.verbs.emu;
