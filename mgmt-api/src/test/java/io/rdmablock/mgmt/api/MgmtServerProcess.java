package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.api.store.EtcdMetadataStore;

import java.nio.file.Path;
import java.time.Duration;

/**
 * A management server on etcd in a process of its own, for kill -9 tests:
 * {@code MgmtServerProcess ENDPOINTS PREFIX DATA_DIR TOKEN}; listens on a free loopback port, prints
 * {@code url <url>} on stdout once it listens; exits after 180 s at most.
 */
public final class MgmtServerProcess {
    private MgmtServerProcess() {
    }

    public static void main(String[] args) throws Exception {
        var config = new EtcdMetadataStore.Config(EtcdMetadataStore.Config.parseEndpoints(args[0]), args[1],
                Duration.ofSeconds(2));
        try (var server = MgmtServer.start(Path.of(args[2]), config,
                MgmtServer.Settings.of("127.0.0.1", 0, args[3]).withNodeTimeoutMs(30_000))) {
            System.out.println("url " + server.url());
            System.out.flush();
            // a wait by design: the child process leads (or serves) until the test kills it; this only bounds its life
            Thread.sleep(180_000);
        }
    }
}
