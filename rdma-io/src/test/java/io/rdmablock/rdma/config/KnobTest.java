package io.rdmablock.rdma.config;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KnobTest {
    private static Knobs of(String name, String value) {
        return new Knobs(Map.of(name, value)::get);
    }

    @Test
    void shouldReadANumberWithinItsBoundsAndDocumentThem() {
        Knob k = Knob.number("x.n", 8, 1, 100, "ms", "what it does");
        assertEquals("8", k.defaultText());
        assertEquals("1..100", k.boundsText());
        assertEquals(8, k.number(new Knobs(n -> null)));
        assertEquals(42, k.number(of("x.n", " 42 ")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> k.number(of("x.n", "0")));
        assertEquals("invalid x.n: value=0, min=1, max=100", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> k.number(of("x.n", "50"), 40));
        assertEquals("invalid x.n: value=50, min=1, max=40", e.getMessage());
        assertEquals(8, k.number(new Knobs(n -> null), 4), "the default is not lowered by upTo");
    }

    @Test
    void shouldRefuseADefaultOutsideTheBoundsAndALineBreak() {
        assertThrows(IllegalArgumentException.class, () -> Knob.number("x.n", 0, 1, 10, "", "d"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Knob.text("x.t", "none", "any", "two\nlines"));
        assertTrue(e.getMessage().contains("x.t"), e.getMessage());
    }

    @Test
    void shouldReadFlagsAndTexts() {
        Knob f = Knob.flag("x.f", true, "d");
        assertEquals("true", f.defaultText());
        assertTrue(f.flag(new Knobs(n -> null)));
        assertFalse(f.flag(of("x.f", "FALSE")));
        assertThrows(IllegalArgumentException.class, () -> f.flag(of("x.f", "yes")));
        Knob t = Knob.text("x.t", "`auto`", "`auto`, `soft`", "d").withDefaultText("auto").withBoundsText("words");
        assertEquals("auto", t.defaultText());
        assertEquals("words", t.boundsText());
        assertNull(t.text(of("x.t", "  ")));
        assertEquals("soft", t.text(of("x.t", " soft ")));
    }
}
