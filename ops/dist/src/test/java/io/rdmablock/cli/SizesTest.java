package io.rdmablock.cli;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SizesTest {
    @Test
    void shouldParseBytesAndBinarySuffixes() {
        assertEquals(1048576, Sizes.parse("--size", "1048576"));
        assertEquals(64L << 20, Sizes.parse("--size", "64M"));
        assertEquals(64L << 20, Sizes.parse("--size", "64MiB"));
        assertEquals(2L << 30, Sizes.parse("--size", "2g"));
        assertEquals(1L << 40, Sizes.parse("--size", "1TiB"));
        assertEquals(4096, Sizes.parse("--size", "4K"));
    }

    @Test
    void shouldRejectDecimalSuffixesAndGarbage() {
        for (String bad : new String[] {"12MB", "", "M", "-1", "1.5G", "12X"}) {
            var e = assertThrows(IllegalArgumentException.class, () -> Sizes.parse("--size", bad), bad);
            assertTrue(e.getMessage().startsWith("invalid --size: --size=\""), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("--size", "99999999999T"));
    }

    @Test
    void shouldFormatHumanSizes() {
        assertEquals("512 B", Sizes.format(512));
        assertEquals("64 MiB", Sizes.format(64L << 20));
        assertEquals("1.5 GiB", Sizes.format(3L << 29));
    }
}
