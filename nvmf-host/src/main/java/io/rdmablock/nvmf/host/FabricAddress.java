package io.rdmablock.nvmf.host;

import java.net.InetSocketAddress;

/**
 * A target's fabric address as the management plane and the CLI write it: {@code host:port}, or
 * {@code [v6addr]:port} for IPv6 (the NVMe-oF TRADDR / TRSVCID pair of an RDMA transport over IP).
 */
public final class FabricAddress {
    private FabricAddress() {
    }

    /**
     * Parses {@code host:port} or {@code [v6addr]:port}; a host name is resolved.
     *
     * @throws IllegalArgumentException naming the value when it has no port or the port is out of 1 .. 65535
     */
    public static InetSocketAddress parse(String hostPort) {
        int colon = hostPort == null ? -1 : hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            throw new IllegalArgumentException("invalid address: '" + hostPort + "', expected host:port");
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid address: '" + hostPort + "', port is not a number");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("invalid port: port=" + port + ", min=1, max=65535");
        }
        return new InetSocketAddress(host, port);
    }
}
