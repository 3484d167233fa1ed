package io.rdmablock.rdma.verbs;

import java.util.List;

/**
 * One verbs provider: the devices it offers and its connection manager.
 *
 * <p>Obtain one with {@link Providers#select(String)}. A provider is thread-safe; the objects it hands out
 * follow the threading rules stated on each type.
 */
public interface VerbsProvider extends AutoCloseable {

    /** Provider name as accepted by {@code rdma.provider}: {@code "soft"}, {@code "ffm"} or {@code "memory"}. */
    String name();

    /**
     * Names of the devices this provider can open ({@code ibv_get_device_list(3)}); empty when none.
     * "No device" (including {@code ENOSYS} from a kernel without InfiniBand support) is an empty list, never an error.
     */
    List<String> deviceNames();

    /**
     * Creates a connection-manager identifier ({@code rdma_create_event_channel(3)} + {@code rdma_create_id(3)},
     * port space {@code RDMA_PS_TCP}, i.e. an RC queue pair). Each id has its own event channel.
     *
     * @throws VerbsException if the provider cannot create one (for {@code ffm}: names the call and errno)
     */
    CmId createId();

    /**
     * Binds and listens ({@code rdma_bind_addr(3)}, {@code rdma_listen(3)}).
     *
     * @param bindAddress IP address and port; port 0 picks a free port (see {@link CmListener#localAddress()})
     * @param backlog     pending connect requests kept, at least 1
     * @throws VerbsException naming the address when the bind fails (e.g. {@code EADDRINUSE})
     */
    CmListener listen(java.net.InetSocketAddress bindAddress, int backlog);

    /** Releases every object created by this provider that is still open. Idempotent. */
    @Override
    void close();
}
