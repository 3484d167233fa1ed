package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A 3-member etcd: one member down, metadata reads and compare-and-set writes go on; two down (no quorum), a write
 * fails within the call bound with {@link MetadataStoreUnavailableException} (not a hang); both back, writes succeed.
 */
class EtcdMetadataStoreQuorumTest {
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(3);

    @Test
    void shouldContinueWithOneMemberDownAndFailBoundedWithoutQuorum(@TempDir Path dir) throws Exception {
        EtcdCluster.assumeAvailable();
        try (var etcd = EtcdCluster.start(dir, 3);
             var store = EtcdMetadataStoreContractTest.openStore(etcd.endpoints(), CALL_TIMEOUT)) {
            store.putVolume(MetadataStoreContract.volume("a", 1));
            int leader = awaitLeader(etcd);
            int follower = (leader + 1) % 3;
            int other = (leader + 2) % 3;

            etcd.stop(follower);
            for (int i = 0; i < 20; i++) { // strictly: no failure at all with 2 of 3 up (the raft leader stayed)
                var read = store.volumeVersioned("a").orElseThrow();
                assertTrue(store.replaceVolume("a", read.revision(), MetadataStoreContract.volume("a", 2 + i)),
                        "CAS " + i + " with one member down");
            }
            assertEquals(21, store.volume("a").orElseThrow().epoch());
            assertEquals(1, store.volumes().size());

            etcd.stop(other); // the leader is alone: no quorum
            long start = System.nanoTime();
            var e = assertThrows(MetadataStoreUnavailableException.class, () -> {
                var read = store.volumeVersioned("a").orElseThrow(); // may already fail: linearizable read
                store.replaceVolume("a", read.revision(), MetadataStoreContract.volume("a", 100));
                // the leader may still ack a read just after losing quorum; a write cannot commit
                store.putVolume(MetadataStoreContract.volume("b", 1));
            });
            long failedMs = (System.nanoTime() - start) / 1_000_000;
            System.out.println("EtcdMetadataStoreQuorumTest: without quorum the call failed after " + failedMs
                    + " ms: " + e.getMessage());
            assertTrue(failedMs < 3 * CALL_TIMEOUT.toMillis() + 2_000, "failed after " + failedMs + " ms");

            etcd.restartNoWait(follower);
            etcd.restartNoWait(other);
            for (int i : new int[] {leader, follower, other}) {
                etcd.awaitHealthy(i, EtcdCluster.START_BOUND);
            }
            long back = System.nanoTime();
            // the value is the refusal (null once the write went through), so a timeout shows the last one
            Await.value(() -> {
                try {
                    var read = store.volumeVersioned("a").orElseThrow();
                    assertTrue(store.replaceVolume("a", read.revision(),
                            read.value().withState(VolumeState.READY)));
                    return null;
                } catch (MetadataStoreUnavailableException again) {
                    return again;
                }
            }, refusal -> refusal == null, Duration.ofSeconds(30), "a write once the members were healthy");
            System.out.println("EtcdMetadataStoreQuorumTest: writes succeeded again "
                    + (System.nanoTime() - back) / 1_000_000 + " ms after the members were healthy");
            assertEquals(VolumeState.READY, store.volume("a").orElseThrow().state());
            store.putVolume(MetadataStoreContract.volume("b", 1));
            assertEquals(2, store.volumes().size());
        }
    }

    static int awaitLeader(EtcdCluster etcd) {
        return Await.value(() -> {
            try {
                return etcd.leaderIndex();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted asking for the raft leader", e);
            }
        }, leader -> leader >= 0, Duration.ofSeconds(20), "an etcd raft leader");
    }
}
