package io.rdmablock.rdma.verbs.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.VerbsException;
import io.rdmablock.rdma.verbs.VerbsProvider;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code ffm} verbs provider: libibverbs + librdmacm through {@code java.lang.foreign}.
 *
 * <p>Devices are opened by librdmacm (every {@code rdma_cm_id} carries its {@code ibv_context}); this provider
 * wraps each context once ({@link #device(MemorySegment)}). "No device" ({@code ibv_get_device_list} NULL with
 * ENOSYS/ENODEV, or an empty list) is an empty {@link #deviceNames()}.
 *
 * <p>iWARP (transport {@code IBV_TRANSPORT_IWARP}, e.g. siw) differences are handled here, not by callers:
 * memory registered with LOCAL_WRITE also gets REMOTE_WRITE (an RDMA READ sink is written by the READ response,
 * which iWARP checks as a remote write). Connection setup is plain rdma_cm: no private protocol, so any peer
 * (a Linux nvme-rdma host or nvmet target over siw or rxe) interoperates; iWARP's "active side sends first" rule is
 * the caller's protocol's to meet (NVMe-oF meets it: the host sends the Connect command first).
 */
final class FfmVerbsProvider implements VerbsProvider {
    private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
    private final Map<Long, FfmDeviceContext> devices = new ConcurrentHashMap<>();
    private volatile boolean closed;

    FfmVerbsProvider() {
        // Touch the bindings so a missing library fails here (VerbsException), not at first use.
        Native.IBVERBS.find("ibv_get_device_list").orElseThrow();
    }

    @Override
    public String name() {
        return "ffm";
    }

    @Override
    public List<String> deviceNames() {
        List<String> names = new ArrayList<>();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment num = a.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) Native.IBV_GET_DEVICE_LIST.invokeExact(Native.errnoSegment(), num);
            if (list.address() == 0) {
                int errno = Native.errno();
                if (errno == Errno.ENOSYS || errno == Errno.ENODEV || errno == Errno.ENOENT || errno == 0) {
                    return List.of();
                }
                throw Native.fail("ibv_get_device_list", errno, "");
            }
            try {
                int n = num.get(JAVA_INT, 0);
                MemorySegment arr = list.reinterpret(ADDRESS.byteSize() * n);
                for (int i = 0; i < n; i++) {
                    MemorySegment dev = arr.getAtIndex(ADDRESS, i);
                    names.add(Native.cString((MemorySegment) Native.IBV_GET_DEVICE_NAME.invokeExact(dev)));
                }
            } finally {
                Native.IBV_FREE_DEVICE_LIST.invokeExact(list);
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("ibv_get_device_list failed: " + t, 0, t);
        }
        return List.copyOf(names);
    }

    @Override
    public CmId createId() {
        checkOpen();
        FfmCmId id = FfmCmId.createActive(this);
        open.add(id);
        return id;
    }

    @Override
    public CmListener listen(InetSocketAddress bindAddress, int backlog) {
        checkOpen();
        if (backlog < 1) {
            throw new IllegalArgumentException("invalid backlog: backlog=" + backlog + ", min=1");
        }
        FfmCmListener l = FfmCmListener.create(this, bindAddress, backlog);
        open.add(l);
        return l;
    }

    /** The wrapper for an {@code ibv_context} opened by librdmacm (created once per context). */
    FfmDeviceContext device(MemorySegment context) {
        if (context.address() == 0) {
            throw new VerbsException("rdma_cm_id has no device yet (resolve the address first)");
        }
        return devices.computeIfAbsent(context.address(), k -> new FfmDeviceContext(context));
    }

    void track(AutoCloseable c) {
        open.add(c);
    }

    void untrack(AutoCloseable c) {
        open.remove(c);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("ffm provider is closed");
        }
    }

    /** Closes listeners and ids (QPs with them), then every device's MRs, PDs and CQs; keeps the first failure. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (AutoCloseable c : List.copyOf(open)) {
            first = Closer.close(c, first);
        }
        open.clear();
        for (FfmDeviceContext d : devices.values()) {
            first = Closer.close(d::closeAll, first);
        }
        if (first != null) {
            throw first;
        }
    }
}
