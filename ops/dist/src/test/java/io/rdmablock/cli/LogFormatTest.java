package io.rdmablock.cli;

import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertTrue;

class LogFormatTest {
    @Test
    void shouldStartLogLinesWithAnIsoTimestampInMilliseconds() {
        var buf = new ByteArrayOutputStream();
        PrintStream err = System.err;
        System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            LoggerFactory.getLogger(LogFormatTest.class).info("log format probe");
        } finally {
            System.setErr(err);
        }
        String line = buf.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains("log format probe"))
                .findFirst().orElse("");
        assertTrue(line.matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d) \\[[^]]+] INFO "
                + "io\\.rdmablock\\.cli\\.LogFormatTest - log format probe"), line);
    }
}
