package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The compare-and-set contract of {@link MetadataStore}, run against every implementation (subclasses). */
abstract class MetadataStoreContract {
    private MetadataStore store;

    abstract MetadataStore open() throws Exception;

    @BeforeEach
    void openStore() throws Exception {
        store = open();
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    static VolumeRecord volume(String name, long epoch) {
        return new VolumeRecord("id-" + name, name, 1 << 20, 4096, 2, List.of(), "n1", VolumeState.CREATING,
                List.of(), 1234, false, epoch, 1, List.of(
                new CopyRecord("n1", CopyRole.PRIMARY, CopyState.IN_SYNC, false),
                new CopyRecord("n2", CopyRole.SECONDARY, CopyState.IN_SYNC, false)), false, VolumeRecord.HOSTS_VERSION);
    }

    static final String KEY_A = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    static final String KEY_B = "HxwdHh8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRo=";

    static NodeRecord node(String id, String key) {
        return new NodeRecord(id, "127.0.0.1:4420", "", 1 << 30, false, 99, 1, key, null);
    }

    @Test
    void shouldCompareAndSetNodesByValueKeepingTheirKeys() {
        assertTrue(store.replaceNode("n1", null, node("n1", KEY_A)), "absent: created");
        assertFalse(store.replaceNode("n1", null, node("n1", KEY_B)), "present: not created again");
        assertEquals(KEY_A, store.node("n1").orElseThrow().nodeKey());
        assertFalse(store.replaceNode("n1", node("n1", null), node("n1", KEY_B)), "stale expected record");
        assertTrue(store.replaceNode("n1", node("n1", KEY_A), node("n1", KEY_B)));
        assertEquals(node("n1", KEY_B), store.node("n1").orElseThrow());
        assertEquals(List.of(node("n1", KEY_B)), store.nodes());
        store.putNode(node("n1", KEY_B).drained());
        assertFalse(store.replaceNode("n1", node("n1", KEY_B), node("n1", KEY_A)), "after an unconditional put");
        store.removeNode("n1");
        assertFalse(store.replaceNode("n1", node("n1", KEY_B).drained(), node("n1", KEY_A)), "absent");
    }

    @Test
    void shouldGiveAKeyToANodeStoredWithoutOneOnlyOnce() {
        store.putNode(node("n1", null)); // as written before node keys
        assertTrue(store.replaceNode("n1", node("n1", null), node("n1", KEY_A)));
        assertFalse(store.replaceNode("n1", node("n1", null), node("n1", KEY_B)), "a second writer loses");
        assertEquals(KEY_A, store.node("n1").orElseThrow().nodeKey());
    }

    @Test
    void shouldCreateOnlyWhenAbsentWithExpectedRevisionZero() {
        assertTrue(store.replaceVolume("a", 0, volume("a", 1)));
        assertFalse(store.replaceVolume("a", 0, volume("a", 2)));
        assertEquals(1, store.volume("a").orElseThrow().epoch());
    }

    @Test
    void shouldRemoveOnlyAtTheRevisionRead() {
        store.putVolume(volume("a", 1));
        var read = store.volumeVersioned("a").orElseThrow();
        assertTrue(store.replaceVolume("a", read.revision(), volume("a", 2)));
        assertFalse(store.removeVolume("a", read.revision()), "stale revision");
        assertTrue(store.volume("a").isPresent());
        var now = store.volumeVersioned("a").orElseThrow();
        assertTrue(store.removeVolume("a", now.revision()));
        assertTrue(store.volume("a").isEmpty());
        assertFalse(store.removeVolume("a", now.revision()), "absent");
    }

    @Test
    void shouldReplaceOnlyAtTheRevisionRead() {
        store.putVolume(volume("a", 1));
        var read = store.volumeVersioned("a").orElseThrow();
        assertEquals(volume("a", 1), read.value());
        assertTrue(store.replaceVolume("a", read.revision(), volume("a", 2)));
        var after = store.volumeVersioned("a").orElseThrow();
        assertTrue(after.revision() > read.revision(), after + " after " + read);
        assertFalse(store.replaceVolume("a", read.revision(), volume("a", 3)), "stale revision");
        assertEquals(volume("a", 2), store.volume("a").orElseThrow());
    }

    @Test
    void shouldFailCompareAndSetAfterAnUnconditionalPut() {
        store.putVolume(volume("a", 1));
        long read = store.volumeVersioned("a").orElseThrow().revision();
        store.putVolume(volume("a", 1).withState(VolumeState.READY));
        assertFalse(store.replaceVolume("a", read, volume("a", 2)));
    }

    @Test
    void shouldNotReuseRevisionsAfterRemoveAndRecreate() {
        store.putVolume(volume("a", 1));
        long before = store.volumeVersioned("a").orElseThrow().revision();
        store.removeVolume("a");
        assertTrue(store.volumeVersioned("a").isEmpty());
        assertFalse(store.replaceVolume("a", before, volume("a", 2)), "absent key has revision 0");
        store.putVolume(volume("a", 1));
        assertFalse(store.replaceVolume("a", before, volume("a", 2)), "revision of the removed record");
    }

    @Test
    void shouldCountRevisionsPerStoreNotPerKey() {
        store.putVolume(volume("a", 1));
        store.putVolume(volume("b", 1));
        long a = store.volumeVersioned("a").orElseThrow().revision();
        long b = store.volumeVersioned("b").orElseThrow().revision();
        assertTrue(b > a, "b=" + b + " a=" + a);
    }

    @Test
    void shouldLetExactlyOneOfTwoConcurrentCompareAndSetsWin() throws Exception {
        var pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 50; round++) {
                String name = "v" + round;
                store.putVolume(volume(name, 1));
                long revision = store.volumeVersioned(name).orElseThrow().revision();
                var start = new CountDownLatch(1);
                List<Future<Boolean>> results = List.of(
                        pool.submit(() -> {
                            start.await();
                            return store.replaceVolume(name, revision, volume(name, 2));
                        }),
                        pool.submit(() -> {
                            start.await();
                            return store.replaceVolume(name, revision, volume(name, 2).withState(VolumeState.READY));
                        }));
                start.countDown();
                boolean first = results.get(0).get(10, TimeUnit.SECONDS);
                boolean second = results.get(1).get(10, TimeUnit.SECONDS);
                assertTrue(first ^ second, "round " + round + ": first=" + first + " second=" + second);
                VolumeRecord won = store.volume(name).orElseThrow();
                assertEquals(first ? VolumeState.CREATING : VolumeState.READY, won.state(), "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    static HostRecord host(String nqn, String secret) {
        return new HostRecord(nqn, secret, null, 1234);
    }

    static final String H1 = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001";
    static final String H2 = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000002";

    @Test
    void shouldCreateHostOnlyWhenAbsentAndReplaceOnlyAtTheRevisionRead() {
        assertTrue(store.replaceHost(H1, 0, host(H1, "s1")));
        assertFalse(store.replaceHost(H1, 0, host(H1, "s2")), "exists");
        var read = store.hostVersioned(H1).orElseThrow();
        assertEquals("s1", read.value().dhchapSecret());
        assertTrue(store.replaceHost(H1, read.revision(), host(H1, "s2")));
        var after = store.hostVersioned(H1).orElseThrow();
        assertTrue(after.revision() > read.revision(), after + " after " + read);
        assertFalse(store.replaceHost(H1, read.revision(), host(H1, "s3")), "stale revision");
        assertEquals("s2", store.hostVersioned(H1).orElseThrow().value().dhchapSecret());
    }

    @Test
    void shouldListHostsByNqnWithTheirRevisions() {
        assertTrue(store.replaceHost(H2, 0, host(H2, "b")));
        assertTrue(store.replaceHost(H1, 0, new HostRecord(H1, "a", "c", 99)));
        store.putVolume(volume("a", 1)); // volumes are not hosts
        var hosts = store.hosts();
        assertEquals(List.of(H1, H2), hosts.stream().map(h -> h.value().hostNqn()).toList());
        assertEquals(new HostRecord(H1, "a", "c", 99), hosts.get(0).value());
        assertEquals(store.hostVersioned(H1).orElseThrow().revision(), hosts.get(0).revision());
        assertTrue(hosts.get(0).revision() > hosts.get(1).revision(), "store-wide revisions: " + hosts);
    }

    @Test
    void shouldRemoveHostOnlyAtTheRevisionRead() {
        assertTrue(store.replaceHost(H1, 0, host(H1, "s1")));
        long first = store.hostVersioned(H1).orElseThrow().revision();
        assertTrue(store.replaceHost(H1, first, host(H1, "s2")));
        assertFalse(store.removeHost(H1, first), "stale revision");
        long now = store.hostVersioned(H1).orElseThrow().revision();
        assertTrue(store.removeHost(H1, now));
        assertTrue(store.hostVersioned(H1).isEmpty());
        assertTrue(store.hosts().isEmpty());
        assertFalse(store.removeHost(H1, now), "absent");
        assertFalse(store.replaceHost(H1, now, host(H1, "s3")), "absent key has revision 0");
        assertTrue(store.replaceHost(H1, 0, host(H1, "s3")));
        assertTrue(store.hostVersioned(H1).orElseThrow().revision() > now, "revisions are not reused");
    }

    @Test
    void shouldLetExactlyOneOfTwoConcurrentHostWritesWin() throws Exception {
        var pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 20; round++) {
                String nqn = H1 + "-" + round;
                var start = new CountDownLatch(1);
                List<Future<Boolean>> results = List.of(
                        pool.submit(() -> {
                            start.await();
                            return store.replaceHost(nqn, 0, host(nqn, "first"));
                        }),
                        pool.submit(() -> {
                            start.await();
                            return store.replaceHost(nqn, 0, host(nqn, "second"));
                        }));
                start.countDown();
                boolean first = results.get(0).get(10, TimeUnit.SECONDS);
                boolean second = results.get(1).get(10, TimeUnit.SECONDS);
                assertTrue(first ^ second, "round " + round + ": first=" + first + " second=" + second);
                assertEquals(first ? "first" : "second", store.hostVersioned(nqn).orElseThrow().value().dhchapSecret());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    static HostCredentialRecord credential(String id, String nqn, String hash) {
        return new HostCredentialRecord(id, nqn, hash, 4321);
    }

    @Test
    void shouldCreateAHostCredentialOnlyWhenItsIdIsFreeAndListThemById() {
        assertTrue(store.createHostCredential(credential("hb", H2, "b".repeat(64))));
        assertTrue(store.createHostCredential(credential("ha", H1, "a".repeat(64))));
        assertFalse(store.createHostCredential(credential("ha", H2, "c".repeat(64))), "id taken");
        assertEquals(credential("ha", H1, "a".repeat(64)), store.hostCredential("ha").orElseThrow());
        assertTrue(store.replaceHost(H1, 0, host(H1, "s1"))); // hosts are not host credentials, nor the reverse
        assertEquals(List.of("ha", "hb"), store.hostCredentials().stream().map(HostCredentialRecord::id).toList());
        assertEquals(List.of(H1), store.hosts().stream().map(h -> h.value().hostNqn()).toList());
        assertTrue(store.hostCredential("hc").isEmpty());
    }

    @Test
    void shouldRemoveAHostCredentialOnce() {
        assertTrue(store.createHostCredential(credential("ha", H1, "a".repeat(64))));
        assertTrue(store.removeHostCredential("ha"));
        assertFalse(store.removeHostCredential("ha"), "already removed");
        assertTrue(store.hostCredential("ha").isEmpty());
        assertTrue(store.hostCredentials().isEmpty());
        assertTrue(store.createHostCredential(credential("ha", H2, "d".repeat(64))), "the id is free again");
        assertEquals(H2, store.hostCredential("ha").orElseThrow().hostNqn());
    }

    @Test
    void shouldLetExactlyOneOfTwoConcurrentHostCredentialCreatesWin() throws Exception {
        var pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 20; round++) {
                String id = "h" + round;
                var start = new CountDownLatch(1);
                List<Future<Boolean>> results = List.of(
                        pool.submit(() -> {
                            start.await();
                            return store.createHostCredential(credential(id, H1, "1".repeat(64)));
                        }),
                        pool.submit(() -> {
                            start.await();
                            return store.createHostCredential(credential(id, H2, "2".repeat(64)));
                        }));
                start.countDown();
                boolean first = results.get(0).get(10, TimeUnit.SECONDS);
                boolean second = results.get(1).get(10, TimeUnit.SECONDS);
                assertTrue(first ^ second, "round " + round + ": first=" + first + " second=" + second);
                assertEquals(first ? H1 : H2, store.hostCredential(id).orElseThrow().hostNqn());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldRejectHostRecordOfAnotherNqn() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> store.replaceHost(H1, 0, host(H2, "s")));
    }

    @Test
    void shouldKeepRequireAuthOfAVolume() {
        VolumeRecord v = volume("a", 1);
        VolumeRecord auth = new VolumeRecord(v.id(), v.name(), v.sizeBytes(), v.lbaSize(), v.replicas(),
                v.allowedHosts(), v.nodeId(), v.state(), v.connectedHosts(), v.createdAtMs(), v.provisioned(),
                v.epoch(), v.minInSync(), v.copies(), true, VolumeRecord.HOSTS_VERSION);
        assertTrue(store.replaceVolume("a", 0, auth));
        assertTrue(store.volume("a").orElseThrow().requireAuth());
        assertTrue(store.volume("a").orElseThrow().withState(VolumeState.READY).requireAuth(), "kept by with*");
    }

    @Test
    void shouldRejectNextRecordOfAnotherName() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> store.replaceVolume("a", 0, volume("b", 1)));
    }
}
