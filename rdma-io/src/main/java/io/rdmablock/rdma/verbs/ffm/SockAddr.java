package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SOCKADDR_IN;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SOCKADDR_IN6;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.off;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** {@code struct sockaddr_in}/{@code sockaddr_in6} to and from {@link InetSocketAddress} (network byte order). */
final class SockAddr {
    private static final long IN_PORT = off(SOCKADDR_IN, "sin_port");
    private static final long IN_ADDR = off(SOCKADDR_IN, "sin_addr");
    private static final long IN6_PORT = off(SOCKADDR_IN6, "sin6_port");
    private static final long IN6_ADDR = off(SOCKADDR_IN6, "sin6_addr");
    private static final long IN6_SCOPE = off(SOCKADDR_IN6, "sin6_scope_id");

    private SockAddr() {
    }

    /** Writes {@code a} as a sockaddr in {@code arena}; an unresolved address is resolved here. */
    static MemorySegment of(InetSocketAddress a, Arena arena) {
        InetAddress ip = a.getAddress();
        if (ip == null) {
            throw new IllegalArgumentException("invalid address: unresolved " + a);
        }
        if (ip instanceof Inet4Address) {
            MemorySegment s = arena.allocate(SOCKADDR_IN);
            s.set(JAVA_SHORT, 0, Native.AF_INET);
            s.set(JAVA_SHORT, IN_PORT, Native.htons(a.getPort()));
            MemorySegment.copy(ip.getAddress(), 0, s, JAVA_BYTE, IN_ADDR, 4);
            return s;
        }
        MemorySegment s = arena.allocate(SOCKADDR_IN6);
        s.set(JAVA_SHORT, 0, Native.AF_INET6);
        s.set(JAVA_SHORT, IN6_PORT, Native.htons(a.getPort()));
        MemorySegment.copy(ip.getAddress(), 0, s, JAVA_BYTE, IN6_ADDR, 16);
        s.set(JAVA_INT, IN6_SCOPE, ((Inet6Address) ip).getScopeId());
        return s;
    }

    /** Reads a sockaddr_storage (AF_INET or AF_INET6); null for any other family. */
    static InetSocketAddress read(MemorySegment storage) {
        short family = storage.get(JAVA_SHORT, 0);
        try {
            if (family == Native.AF_INET) {
                byte[] ip = storage.asSlice(IN_ADDR, 4).toArray(JAVA_BYTE);
                return new InetSocketAddress(InetAddress.getByAddress(ip), Native.ntohs(storage.get(JAVA_SHORT, IN_PORT)));
            }
            if (family == Native.AF_INET6) {
                byte[] ip = storage.asSlice(IN6_ADDR, 16).toArray(JAVA_BYTE);
                return new InetSocketAddress(InetAddress.getByAddress(ip), Native.ntohs(storage.get(JAVA_SHORT, IN6_PORT)));
            }
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
        return null;
    }
}
