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
                new CopyRecord("n2", CopyRole.SECONDARY, CopyState.IN_SYNC, false)));
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

    @Test
    void shouldRejectNextRecordOfAnotherName() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> store.replaceVolume("a", 0, volume("b", 1)));
    }
}
