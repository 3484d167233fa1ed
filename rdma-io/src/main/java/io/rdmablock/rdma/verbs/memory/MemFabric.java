package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.VerbsException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The JVM-wide "fabric" of the memory provider: listeners by address and port (a listener bound to the wildcard
 * address takes connects to any address on its port, a specific one only to its own), ephemeral ports, and the one
 * timer thread that ends finite RNR retries ({@link MemLink}). Ports here are not TCP ports: a memory listener on 4420
 * does not conflict with a TCP socket on 4420. Control path only (synchronized); nothing here runs per I/O.
 */
final class MemFabric {
    /** First port handed out for port 0 (binds) and for the local side of active ids. */
    static final int EPHEMERAL_FIRST = 32768;
    private static final Map<Integer, Map<InetAddress, MemCmListener>> LISTENERS = new HashMap<>();
    private static int nextEphemeral = EPHEMERAL_FIRST;
    private static final ScheduledThreadPoolExecutor TIMER = timer();

    private MemFabric() {
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, "mem-verbs-timer");
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        return t;
    }

    /** Runs {@code r} once after {@code delayNs} on the fabric's timer thread. */
    static void schedule(Runnable r, long delayNs) {
        TIMER.schedule(r, delayNs, TimeUnit.NANOSECONDS);
    }

    /**
     * Binds {@code l} at {@code address} (port 0: a free port from {@link #EPHEMERAL_FIRST}) and returns the bound
     * address.
     *
     * @throws VerbsException errno 98 (EADDRINUSE) when the address and port, or the wildcard on that port, is taken
     */
    static synchronized InetSocketAddress bind(MemCmListener l, InetSocketAddress address) {
        InetAddress ip = address.getAddress();
        if (ip == null) {
            throw new VerbsException("rdma_bind_addr failed: errno=99 (EADDRNOTAVAIL), unresolved address="
                    + address, 99);
        }
        int port = address.getPort();
        if (port == 0) {
            for (int i = 0; i < 65536 - EPHEMERAL_FIRST && port == 0; i++) {
                int p = nextPort();
                if (!LISTENERS.containsKey(p)) {
                    port = p;
                }
            }
            if (port == 0) {
                throw new VerbsException("rdma_bind_addr failed: errno=98 (EADDRINUSE), no free port", 98);
            }
        }
        Map<InetAddress, MemCmListener> onPort = LISTENERS.computeIfAbsent(port, k -> new HashMap<>());
        boolean conflict = onPort.containsKey(ip) || (!onPort.isEmpty() && ip.isAnyLocalAddress());
        for (InetAddress bound : onPort.keySet()) {
            conflict |= bound.isAnyLocalAddress();
        }
        if (conflict) {
            throw new VerbsException("rdma_bind_addr failed: errno=98 (EADDRINUSE), address=" + address, 98);
        }
        onPort.put(ip, l);
        return new InetSocketAddress(ip, port);
    }

    static synchronized void unbind(MemCmListener l, InetSocketAddress bound) {
        Map<InetAddress, MemCmListener> onPort = LISTENERS.get(bound.getPort());
        if (onPort != null && onPort.remove(bound.getAddress(), l) && onPort.isEmpty()) {
            LISTENERS.remove(bound.getPort());
        }
    }

    /** The listener that takes a connect to {@code remote}, or null. */
    static synchronized MemCmListener lookup(InetSocketAddress remote) {
        Map<InetAddress, MemCmListener> onPort = LISTENERS.get(remote.getPort());
        if (onPort == null) {
            return null;
        }
        MemCmListener l = onPort.get(remote.getAddress());
        if (l == null) {
            for (Map.Entry<InetAddress, MemCmListener> e : onPort.entrySet()) {
                if (e.getKey().isAnyLocalAddress()) {
                    l = e.getValue();
                }
            }
        }
        return l;
    }

    /** A port number for the local side of an active id. */
    static synchronized int nextPort() {
        int p = nextEphemeral;
        nextEphemeral = p == 65535 ? EPHEMERAL_FIRST : p + 1;
        return p;
    }
}
