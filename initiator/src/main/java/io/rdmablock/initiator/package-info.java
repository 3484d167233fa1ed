/**
 * The host side of rdmablock: {@link io.rdmablock.initiator.BlockDevice}, a remote NVMe namespace as an asynchronous
 * block device, and its NVMe-oF/RDMA implementation {@link io.rdmablock.initiator.NvmeBlockDevice}.
 *
 * <p>Threads: one controller thread per device (admin queue, Keep Alive, reconnect) and one poller thread per I/O
 * queue that owns its queue pair (run to completion). Application threads hand requests to pollers through a
 * lock-free stack; no lock is taken per I/O. Memory: every capsule, response buffer and bounce buffer is registered
 * once per device; buffers from {@code allocateBuffer} are registered once and used in place (zero copy).
 */
package io.rdmablock.initiator;
