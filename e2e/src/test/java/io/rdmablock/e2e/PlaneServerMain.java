package io.rdmablock.e2e;

import io.rdmablock.mgmt.api.http.MgmtHttpOptions;
import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.api.store.EtcdMetadataStore;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * A management server on etcd as {@link CampaignMgmtPlane} starts it when the CLI (ops/dist) is not on the test
 * classpath (the e2e module's own tests under Maven): the same flags as {@code rdmablock mgmt} for what the plane
 * passes, {@code mgmt --listen HOST:PORT --data-dir DIR --token T --node-timeout-ms MS --lease-ms MS
 * --etcd-endpoints LIST [--allow-plaintext-secrets]}; runs until killed.
 */
final class PlaneServerMain {
    private PlaneServerMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>();
        boolean plaintextSecrets = false;
        for (int i = 1; i < args.length; i++) { // args[0] is "mgmt"
            if ("--allow-plaintext-secrets".equals(args[i])) {
                plaintextSecrets = true; // the one flag without a value
            } else if (i + 1 < args.length) {
                o.put(args[i], args[++i]);
            }
        }
        String listen = o.get("--listen");
        int colon = listen.lastIndexOf(':');
        String host = listen.substring(0, colon);
        int port = Integer.parseInt(listen.substring(colon + 1));
        var etcd = new EtcdMetadataStore.Config(EtcdMetadataStore.Config.parseEndpoints(o.get("--etcd-endpoints")),
                EtcdMetadataStore.DEFAULT_PREFIX, Duration.ofSeconds(2));
        try (var server = MgmtServer.start(Path.of(o.get("--data-dir")), etcd,
                MgmtServer.Settings.of(host, port, o.get("--token"))
                        .withHttp(MgmtHttpOptions.of(o.get("--token")).withPlaintextSecrets(plaintextSecrets))
                        .withNodeTimeoutMs(Long.parseLong(o.get("--node-timeout-ms")))
                        .withLeaseMs(Long.parseLong(o.get("--lease-ms")))
                        .withAdvertiseUrl("http://" + listen))) {
            System.out.println("management server listening on " + server.url());
            System.out.flush();
            Thread.currentThread().join(); // until killed
        }
    }
}
