package io.rdmablock.rdma.verbs.ffm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Compiles and runs the C helpers under {@code src/test/c} into {@code target/ffm-native} (never committed). */
final class Gcc {
    static final Path SRC = Path.of("src/test/c");
    static final Path OUT = Path.of("target/ffm-native");

    private Gcc() {
    }

    /** Runs {@code gcc args...} and fails with gcc's output (and the packages to install) when it fails. */
    static void compile(String... args) throws IOException, InterruptedException {
        Files.createDirectories(OUT);
        List<String> cmd = new ArrayList<>();
        cmd.add("gcc");
        cmd.addAll(List.of(args));
        String out = run(cmd, 120);
        if (out == null) {
            throw new AssertionError("gcc failed (needs gcc, libibverbs-dev, librdmacm-dev): " + cmd + "\n" + lastOutput);
        }
    }

    private static String lastOutput = "";

    /** Runs a command; returns its stdout, or null when it fails (output kept for the message). */
    static String run(List<String> cmd, int timeoutSeconds) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            lastOutput = e.toString();
            return null;
        }
        byte[] bytes = p.getInputStream().readAllBytes();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            lastOutput = "timed out after " + timeoutSeconds + " s";
            return null;
        }
        lastOutput = new String(bytes, StandardCharsets.UTF_8);
        return p.exitValue() == 0 ? lastOutput : null;
    }

    static String lastOutput() {
        return lastOutput;
    }
}
