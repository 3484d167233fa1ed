package io.rdmablock.e2e;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The network namespaces ops/chaos/failover sets up for {@link FailoverCampaign}: node k in {@code PREFIX-nk} at
 * {@code A.B.C.(10+k)}, the management server at {@code A.B.C.1}; cuts are blackhole routes inside a namespace.
 */
final class CampaignNetwork {
    final String netns;
    final String subnet;

    CampaignNetwork(String netns, String subnet) {
        this.netns = netns;
        this.subnet = subnet;
    }

    /** Node k in namespace PREFIX-nk at A.B.C.(10+k):4420; the management server at A.B.C.1 (the bridge). */
    NodeCluster.Placement placement() {
        return new NodeCluster.Placement() {
            public String mgmtHost() {
                return subnet + ".1";
            }

            public String nodeHost(int k) {
                return nodeAddress(k);
            }

            public int nodePort(int k) {
                return 4420; // each namespace has its own address: a fixed port survives a restart
            }

            public List<String> launchPrefix(int k) {
                return List.of("ip", "netns", "exec", ns(k));
            }
        };
    }

    String ns(int k) {
        return netns + "-n" + k;
    }

    String nodeAddress(int k) {
        return subnet + "." + (10 + k);
    }

    /** Adds (or removes) a blackhole route to {@code address} inside node {@code k}'s namespace. */
    void blackhole(int k, String address, boolean add) throws IOException, InterruptedException {
        List<String> cmd = List.of("ip", "netns", "exec", ns(k), "ip", "route", add ? "add" : "del", "blackhole",
                address + "/32");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
        }
    }
}
