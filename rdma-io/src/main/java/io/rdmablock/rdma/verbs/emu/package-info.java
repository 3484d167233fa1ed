/**
 * The engine of the two emulated verbs providers, {@code soft} ({@link io.rdmablock.rdma.verbs.soft}) and
 * {@code memory} ({@link io.rdmablock.rdma.verbs.memory}): everything but the transport, written once. It owns the
 * device with its memory-region key table ({@link io.rdmablock.rdma.verbs.emu.EmuDevice}), protection domains
 * ({@link io.rdmablock.rdma.verbs.emu.EmuPd}), memory regions ({@link io.rdmablock.rdma.verbs.emu.EmuMr}) with the key
 * and SGE checks, the RC queue pair less its transport ({@link io.rdmablock.rdma.verbs.emu.EmuQp}: send and receive
 * rings, post-time checks, completions, flushes, the responder's RECV checks), the completion queue
 * ({@link io.rdmablock.rdma.verbs.emu.EmuCq} over {@link io.rdmablock.rdma.verbs.emu.EmuCqRing}), the
 * connection-manager id less its handshake ({@link io.rdmablock.rdma.verbs.emu.EmuCmId}), the provider with its checks
 * ({@link io.rdmablock.rdma.verbs.emu.EmuProvider}) and its registration
 * ({@link io.rdmablock.rdma.verbs.emu.EmuProviderFactory}), the checks of queue-pair attributes
 * ({@link io.rdmablock.rdma.verbs.emu.EmuQpAttrs}) and the table of open resources
 * ({@link io.rdmablock.rdma.verbs.emu.EmuResources}).
 *
 * <p>A provider package is the transport: a subclass of {@code EmuQp} (what a post, an error, a poll or a wait of a
 * completion queue sets going: soft's TCP engine, memory's in-process drain), of {@code EmuCmId} (the handshake),
 * of {@code EmuProvider} (ids and listeners), and its listener. This package imports only the verbs API; the
 * provider packages import it, never each other. The classes are public only so that both provider packages can use
 * them; they are not an API for users, who reach them through {@link io.rdmablock.rdma.verbs.VerbsProvider}. The post
 * and poll paths call the transport once per post or per attached queue pair and poll (an abstract method with two
 * implementations in all); everything else on them is a final method called directly.
 */
package io.rdmablock.rdma.verbs.emu;
