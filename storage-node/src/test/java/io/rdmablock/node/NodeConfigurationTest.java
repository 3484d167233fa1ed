package io.rdmablock.node;

import io.rdmablock.node.store.IoBackend;
import io.rdmablock.node.store.StoreOptions;
import io.rdmablock.node.target.ConnectLimits;
import io.rdmablock.node.target.DhchapLimits;
import io.rdmablock.node.target.TargetTuning;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NodeConfigurationTest {

    private static NodeConfiguration of(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return NodeConfiguration.from(m::get);
    }

    private static String error(String... kv) {
        return assertThrows(IllegalArgumentException.class, () -> of(kv)).getMessage();
    }

    @Test
    void shouldGiveTodaysDefaultsWhenNothingIsSet() {
        NodeConfiguration c = of();
        assertEquals(NodeConfiguration.DEFAULTS, c);
        assertEquals(8, c.target().storeWaitMin());
        assertEquals(16, c.target().epochWindow());
        assertTrue(c.target().registerStoreBuffers());
        assertEquals(ConnectLimits.DEFAULTS, c.target().connectLimits());
        assertEquals(DhchapLimits.DEFAULTS, c.target().dhchap());
        assertEquals(10_000, c.replicaOpenTimeoutMs());
        assertEquals(10_000_000_000L, c.replicaOpenTimeoutNs());
        assertEquals(StoreOptions.defaults(), c.storeOptions());
        assertNull(c.storeFaults());
        assertNull(c.storeFaultsRule());
        assertEquals(50, c.backgroundLatencySlackPct());
        assertEquals(NodeConfiguration.DEFAULTS, of(NodeConfiguration.STORE_WAIT_MIN, " ",
                NodeConfiguration.STORE_BACKEND, "auto"), "blank and auto are the defaults");
    }

    @Test
    void shouldReadEveryKnobByItsName() {
        NodeConfiguration c = of("rdmablock.node.storeWaitMin", "1000", "rdmablock.node.epochWindow", "1000000",
                "rdmablock.target.registerStoreBuffers", "FALSE", "rdmablock.node.maxControllers", "10",
                "rdmablock.node.maxDiscoveryControllers", "11", "rdmablock.node.maxControllersPerHost", "12",
                "rdmablock.node.maxQueuesPerHost", "13", "rdmablock.node.maxRegisteredBytes", "1048576",
                "rdmablock.node.defaultKatoMs", "5000", "rdmablock.node.maxKatoMs", "6000",
                "rdmablock.node.dhchap.threads", "2", "rdmablock.node.dhchap.queueMax", "3",
                "rdmablock.node.dhchap.addressUnitsPerSecond", "4", "rdmablock.node.dhchap.addressBurstUnits", "5",
                "rdmablock.node.dhchap.transactionsBeforeSuccess", "6", "rdmablock.node.dhchap.reauthIntervalMs", "0",
                "rdmablock.replica.openTimeoutMs", "120000", "rdmablock.store.backend", "threadpool",
                "rdmablock.store.poolThreads", "4", "rdmablock.store.directIoAlignBytes", "4096",
                "rdmablock.store.preallocate", "true", "rdmablock.store.faults", "stall:vol1:0:10",
                "rdmablock.node.background.latencySlackPct", "200");
        TargetTuning t = c.target();
        assertEquals(1000, t.storeWaitMin());
        assertEquals(1_000_000, t.epochWindow());
        assertFalse(t.registerStoreBuffers());
        assertEquals(new ConnectLimits(10, 11, 12, 13, 1L << 20, 5000, 6000), t.connectLimits());
        assertEquals(new DhchapLimits(2, 3, 4, 5, 6, 0), t.dhchap());
        assertEquals(120_000_000_000L, c.replicaOpenTimeoutNs());
        assertEquals(new StoreOptions(IoBackend.THREAD_POOL, 4, 4096, true), c.storeOptions());
        assertNotNull(c.storeFaultsRule());
        assertEquals(1, c.storeFaultsRule().remaining(), "a fresh rule each time");
        assertEquals(200, c.backgroundLatencySlackPct());
    }

    @Test
    void shouldFailNamingThePropertyTheValueAndTheBounds() {
        assertEquals("invalid rdmablock.node.storeWaitMin: value=0, min=1, max=2147483647",
                error("rdmablock.node.storeWaitMin", "0"));
        assertEquals("invalid rdmablock.node.background.latencySlackPct: value=0, min=1, max=10000",
                error("rdmablock.node.background.latencySlackPct", "0"));
        assertEquals("invalid rdmablock.node.epochWindow: value=0, min=1, max=1000000",
                error("rdmablock.node.epochWindow", "0"));
        assertEquals("invalid rdmablock.node.epochWindow: value=x (not a number), min=1, max=1000000",
                error("rdmablock.node.epochWindow", "x"));
        assertEquals("invalid rdmablock.target.registerStoreBuffers: value=no, allowed=true|false",
                error("rdmablock.target.registerStoreBuffers", "no"));
        assertEquals("invalid rdmablock.node.defaultKatoMs: value=7000, min=1000, max=6000",
                error("rdmablock.node.maxKatoMs", "6000", "rdmablock.node.defaultKatoMs", "7000"));
        assertEquals("invalid rdmablock.node.maxRegisteredBytes: value=1, min=1048576, max=1099511627776",
                error("rdmablock.node.maxRegisteredBytes", "1"));
        assertEquals("invalid rdmablock.node.dhchap.threads: value=17, min=1, max=16",
                error("rdmablock.node.dhchap.threads", "17"));
        assertEquals("invalid rdmablock.replica.openTimeoutMs: value=0, min=1, max=3600000",
                error("rdmablock.replica.openTimeoutMs", "0"));
        assertTrue(error("rdmablock.store.backend", "spdk").startsWith("invalid rdmablock.store.backend: value=spdk"));
        assertEquals("invalid rdmablock.store.poolThreads: value=0, min=1, max=1024",
                error("rdmablock.store.poolThreads", "0"));
        assertEquals("invalid rdmablock.store.directIoAlignBytes: value=1000, allowed=0 or a power of two 512-65536",
                error("rdmablock.store.directIoAlignBytes", "1000"));
        assertEquals("invalid rdmablock.store.preallocate: value=yes, allowed=true|false",
                error("rdmablock.store.preallocate", "yes"));
        assertTrue(error("rdmablock.store.faults", "hang").startsWith("invalid rdmablock.store.faults: value=hang"));
    }
}
