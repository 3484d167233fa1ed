/**
 * The {@code memory} verbs provider (benchmarks and tests): initiator and node in <b>one JVM</b>, so that the cost of
 * rdmablock's own stack per I/O can be measured apart from TCP and disk ({@code rdmablock bench --stack-only}). One
 * device per provider instance, {@code mem0} ({@link io.rdmablock.rdma.verbs.DeviceContext.Transport#SOFT}).
 *
 * <h2>Structure</h2>
 * A variant of the soft provider with the transport swapped: the queue pair's rings, post-time checks and
 * completions ({@link io.rdmablock.rdma.verbs.emu.EmuQp}), the completion queue, the connection-manager id's state,
 * the memory regions and the responder's RECV checks are the engine's in {@link io.rdmablock.rdma.verbs.emu}, shared
 * with {@code soft}; this package holds only the in-process transport: the fabric, the link that runs a connection's
 * work, the copies, the handshake and the listener. Connection manager in-process ({@link io.rdmablock.rdma.verbs.memory.MemFabric}: listeners by address and port,
 * JVM-wide). A connection ({@link io.rdmablock.rdma.verbs.memory.MemLink}) has no thread: posting runs the work on
 * the caller's thread (SEND copied straight into the peer's next posted RECV, RDMA READ/WRITE copied between
 * registered regions, {@link io.rdmablock.rdma.verbs.memory.MemTransfer}) and pushes the completions onto the CQs
 * (the engine's lock-free ring; a thread blocked in {@code await} is unparked). One timer thread per JVM ends finite
 * RNR waits. Posting and polling allocate nothing and take no lock.
 *
 * <h2>Semantics: the soft provider's, check for check</h2>
 * The same post-time checks (lkey, PD, bounds, LOCAL_WRITE on RECV and READ sinks: LOC_PROT_ERR in order), the same
 * responder checks (rkey, PD, open region, bounds, REMOTE_READ/REMOTE_WRITE: REM_ACCESS_ERR, nothing placed), the
 * same SEND rules (LOC_LEN_ERR / REM_INV_REQ_ERR, RNR with {@code rnrRetryCount} retries of 1 ms, 7 = forever), the
 * same teardown (any error: both QPs to ERROR, everything flushed WR_FLUSH_ERR, DISCONNECTED on both ids), the same
 * send-queue slot accounting and CQ overrun. Memory is touched only through registered, open regions whose checks
 * passed; a closed region is refused.
 *
 * <h2>Differences</h2>
 * <ul>
 *   <li>Operations complete at once (no wire): a signaled WR's completion is on the CQ when {@code postSend}
 *   returns, unless it waits for a RECV (RNR).</li>
 *   <li>Ports are the fabric's, not TCP's; connecting to a port without a memory listener fails UNREACHABLE.</li>
 *   <li>When both sides post at once, one thread runs both sides' copies (see {@link
 *   io.rdmablock.rdma.verbs.memory.MemLink}): per-thread CPU figures attribute a copy to whichever thread ran it.</li>
 * </ul>
 */
package io.rdmablock.rdma.verbs.memory;
