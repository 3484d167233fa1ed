package io.rdmablock.node.store;

import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every struct offset, size and constant the FFM code hard-codes ({@link IoUring}, {@link Syscalls}) equals the value
 * from the C headers: src/test/c/store_layout.c is compiled with gcc and prints "NAME value" lines.
 */
class IoUringLayoutTest {

    @Test
    void shouldMatchEveryNativeLayoutAndConstantOfTheKernelHeaders() throws Exception {
        Path out = Path.of("target", "store-native");
        Files.createDirectories(out);
        Path exe = out.resolve("store_layout");
        Process gcc;
        try {
            gcc = new ProcessBuilder("gcc", "-o", exe.toString(), "src/test/c/store_layout.c")
                    .redirectErrorStream(true).start();
        } catch (java.io.IOException e) {
            Assumptions.abort("gcc not available: " + e.getMessage());
            return;
        }
        String gccOut = new String(gcc.getInputStream().readAllBytes());
        assertTrue(gcc.waitFor(120, TimeUnit.SECONDS), "gcc finished");
        assertEquals(0, gcc.exitValue(), "gcc (needs linux-libc-dev 6.1+): " + gccOut);
        Process p = new ProcessBuilder(exe.toString()).start();
        String text = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        List<String> mismatches = new ArrayList<>();
        int checked = 0;
        for (String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            String[] kv = line.trim().split(" ");
            long expected = Long.parseLong(kv[1]);
            Long actual = javaValue(kv[0]);
            if (actual == null) {
                mismatches.add(kv[0] + ": no such constant in IoUring or Syscalls");
            } else if (actual != expected) {
                mismatches.add(kv[0] + ": java=" + actual + ", C=" + expected);
            }
            checked++;
        }
        assertTrue(checked > 60, "checked " + checked + " values");
        assertEquals(List.of(), mismatches);
    }

    private static Long javaValue(String name) throws IllegalAccessException {
        for (Class<?> c : new Class<?>[] {IoUring.class, Syscalls.class}) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return ((Number) f.get(null)).longValue();
            } catch (NoSuchFieldException e) {
                // next class
            }
        }
        return null;
    }
}
