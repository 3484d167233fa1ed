package io.rdmablock.tools.copy;

import io.rdmablock.mgmt.client.Json;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CopyOptionsTest {
    private static CopyOptions options(String output) {
        var o = new CopyOptions();
        o.chunkBytes = 1 << 20;
        o.depth = 8;
        o.output = output;
        return o;
    }

    @Test
    void shouldPrintTheResultAsJsonOnStdoutOnlyWithOutputJson() {
        PrintStream saved = System.out;
        var captured = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            options("text").result(Map.of("bytes", 1));
            assertEquals("", captured.toString(StandardCharsets.UTF_8));
            options("json").result(Map.of("command", "import", "bytes", 4096));
        } finally {
            System.setOut(saved);
        }
        Map<?, ?> m = Json.read(captured.toString(StandardCharsets.UTF_8), Map.class);
        assertEquals("import", m.get("command"));
        assertEquals(4096, m.get("bytes"));
    }

    @Test
    void shouldPrintFailuresAsJsonWithOutputJson() {
        var err = new ByteArrayOutputStream();
        options("json").failure(new PrintStream(err, true, StandardCharsets.UTF_8), "export", "no such volume", 1);
        Map<?, ?> m = Json.read(err.toString(StandardCharsets.UTF_8), Map.class);
        assertEquals("export failed: no such volume", m.get("error"));
        assertEquals(1, m.get("exitCode"));
    }

    @picocli.CommandLine.Command(name = "t")
    static final class Holder {
        @picocli.CommandLine.Mixin
        CopyOptions copy = new CopyOptions();
    }

    @Test
    void shouldDefaultToTableAndAcceptTheOldSpellingsDepthAndText() {
        var defaults = new Holder();
        new picocli.CommandLine(defaults).parseArgs();
        assertTrue(defaults.copy.valid("import", System.err));
        assertEquals("table", defaults.copy.output);
        assertEquals(8, defaults.copy.depth);
        var iodepth = new Holder();
        new picocli.CommandLine(iodepth).parseArgs("--iodepth", "16", "-o", "json");
        assertTrue(iodepth.copy.valid("import", System.err));
        assertEquals(16, iodepth.copy.depth);
        assertTrue(iodepth.copy.json());
        var old = new Holder();
        new picocli.CommandLine(old).parseArgs("--depth", "4", "-o", "text");
        assertTrue(old.copy.valid("import", System.err));
        assertEquals(4, old.copy.depth);
        assertFalse(old.copy.json());
    }

    @Test
    void shouldRejectAnUnknownOutputFormat() {
        var err = new ByteArrayOutputStream();
        assertFalse(options("yaml").valid("import", new PrintStream(err, true, StandardCharsets.UTF_8)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("invalid --output: --output=yaml"), err.toString());
        assertTrue(options("json").valid("import", System.err));
    }
}
