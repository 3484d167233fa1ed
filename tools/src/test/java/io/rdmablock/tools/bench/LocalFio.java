package io.rdmablock.tools.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs the locally installed fio ({@code /usr/bin/fio}) on a file with {@code --ioengine=psync}, for tests that
 * compare the I/O pattern of {@code rdmablock bench} with fio's own; they are skipped, saying why, where fio is absent.
 * The I/Os come from fio's {@code --write_iolog} (version 3: time in us since the log started, file, action, offset,
 * length).
 */
final class LocalFio {
    static final Path FIO = Path.of("/usr/bin/fio");

    /** One I/O of fio's iolog. */
    record Io(long timeUs, boolean read, long offset, long length) {
    }

    private LocalFio() {
    }

    static void assumeInstalled() {
        Assumptions.assumeTrue(Files.isExecutable(FIO), "fio is not installed at " + FIO + ": nothing to compare with");
    }

    /** Runs fio with {@code args} (options as {@code --k=v}); returns its output; fails unless it exits 0. */
    static String run(Path dir, List<String> args) throws IOException, InterruptedException {
        return run(dir, args, true);
    }

    /** Runs fio with {@code args}; returns its output (stdout and stderr). Bounded to 60 s. */
    static String run(Path dir, List<String> args, boolean mustSucceed) throws IOException, InterruptedException {
        assumeInstalled();
        List<String> cmd = new ArrayList<>(List.of(FIO.toString()));
        cmd.addAll(args);
        Path out = Files.createTempFile(dir, "fio", ".out");
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("fio did not finish in 60 s: " + cmd);
        }
        String text = Files.readString(out);
        if (mustSucceed && p.exitValue() != 0) {
            throw new AssertionError("fio exit " + p.exitValue() + ": " + cmd + "\n" + text);
        }
        return text;
    }

    /** Runs one fio job on {@code file} with {@code --ioengine=psync} and returns its reads and writes in order. */
    static List<Io> iolog(Path dir, Path file, String... options) throws IOException, InterruptedException {
        Path log = Files.createTempFile(dir, "iolog", ".txt");
        Files.delete(log); // fio appends
        List<String> args = new ArrayList<>(List.of("--name=j", "--ioengine=psync", "--filename=" + file,
                "--write_iolog=" + log, "--output=/dev/null"));
        for (String o : options) {
            args.add("--" + o);
        }
        run(dir, args);
        List<Io> ios = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 5 && (f[2].equals("read") || f[2].equals("write"))) {
                ios.add(new Io(Long.parseLong(f[0]), f[2].equals("read"), Long.parseLong(f[3]), Long.parseLong(f[4])));
            }
        }
        return ios;
    }
}
