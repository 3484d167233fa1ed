package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.Test;

class FioValuesTest {

    @Test
    void shouldParseSizesWithBinarySuffixes() {
        assertEquals(4096, FioValues.size("bs", "4k"));
        assertEquals(4096, FioValues.size("bs", "4K"));
        assertEquals(4096, FioValues.size("bs", "4KiB"));
        assertEquals(1L << 20, FioValues.size("bs", "1m"));
        assertEquals(10L << 30, FioValues.size("size", "10G"));
        assertEquals(100L << 30, FioValues.size("size", "100g"));
        assertEquals(512, FioValues.size("bs", "512"));
        assertThrows(IllegalArgumentException.class, () -> FioValues.size("bs", "four"));
    }

    @Test
    void shouldParseTimesInSecondsByDefault() {
        assertEquals(900_000_000_000L, FioValues.timeNs("runtime", "900"));
        assertEquals(500_000_000L, FioValues.timeNs("runtime", "500ms"));
        assertEquals(10_000_000_000L, FioValues.timeNs("runtime", "10s"));
        assertEquals(120_000_000_000L, FioValues.timeNs("runtime", "2m"));
    }

    @Test
    void shouldSplitTheRemainderOfBssplitEqually() {
        List<FioValues.Split> s = FioValues.bssplit("4k/50:64k/:1m/");
        assertEquals(3, s.size());
        assertEquals(25.0, s.get(1).percent(), 1e-9);
        assertEquals(1 << 20, s.get(2).bs());
        assertThrows(IllegalArgumentException.class, () -> FioValues.bssplit("4k/60:8k/60"));
    }

    @Test
    void shouldReadPercentagesAndBooleans() {
        assertEquals(50.0, FioValues.percent("offset", "50%"));
        assertEquals(-1.0, FioValues.percent("offset", "64m"));
        assertTrue(FioValues.bool("time_based", ""));
        assertFalse(FioValues.bool("verify", "0"));
    }
}
