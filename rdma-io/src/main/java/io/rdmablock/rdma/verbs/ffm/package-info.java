/**
 * The {@code ffm} verbs provider: {@code java.lang.foreign} bindings to libibverbs.so.1 and librdmacm.so.1
 * (rdma-core).
 *
 * <ul>
 * <li>{@link io.rdmablock.rdma.verbs.ffm.NativeStructs}: the one layout definition per native struct, checked
 *     against the installed headers by {@code FfmLayoutsTest} ({@code src/test/c/ffm_layouts.c}).</li>
 * <li>{@link io.rdmablock.rdma.verbs.ffm.Native}: downcall handles; errno captured with
 *     {@code Linker.Option.captureCallState("errno")}; the static-inline data-path verbs ({@code ibv_post_send},
 *     {@code ibv_post_recv}, {@code ibv_poll_cq}, {@code ibv_req_notify_cq}) called through
 *     {@code ibv_context.ops}.</li>
 * <li>Queue pairs and completion queues translate work requests and completions through native memory
 *     preallocated per QP/CQ: nothing is allocated per post or poll.</li>
 * <li>Every wait (CM events, completion events) is {@code poll(2)} with a timeout on an O_NONBLOCK fd plus an
 *     eventfd for wake-ups.</li>
 * <li>iWARP differences are handled inside: REMOTE_WRITE added to LOCAL_WRITE registrations (RDMA READ sinks), and
 *     nothing private on the wire: the "active side sends first" rule of iWARP (RFC 5044) is left to the protocol
 *     on top (NVMe-oF's host sends the Connect command first); *_WITH_IMM is refused by iWARP devices at post time
 *     (PostException says so).</li>
 * </ul>
 * "No device" (ibv_get_device_list NULL with ENOSYS, or empty) is an empty device list, so
 * {@code rdma.provider=auto} falls back to {@code soft}.
 */
package io.rdmablock.rdma.verbs.ffm;
