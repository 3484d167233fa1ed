package io.rdmablock.mgmt.api.ha;

import io.rdmablock.mgmt.api.store.EtcdMetadataStore;

import java.time.Duration;

/**
 * A contender in a process of its own, for kill -9 tests: {@code LeadershipProcess ENDPOINTS ELECTION URL TTL_S};
 * prints {@code gained} / {@code lost: why} on stdout; exits after 120 s at most.
 */
public final class LeadershipProcess {
    private LeadershipProcess() {
    }

    public static void main(String[] args) throws Exception {
        var client = EtcdMetadataStore.newClient(EtcdMetadataStore.Config.parseEndpoints(args[0]));
        var leadership = new Leadership(client, new Leadership.Config(args[1], args[2],
                Duration.ofSeconds(Long.parseLong(args[3]))), new Leadership.Listener() {
            @Override
            public void gained() {
                System.out.println("gained");
                System.out.flush();
            }

            @Override
            public void lost(String why) {
                System.out.println("lost: " + why);
                System.out.flush();
            }
        });
        leadership.start();
        // a wait by design: the child process leads (or serves) until the test kills it; this only bounds its life
        Thread.sleep(120_000);
        leadership.close();
        client.close();
    }
}
