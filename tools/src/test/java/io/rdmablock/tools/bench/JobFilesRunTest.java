package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Real job files (the shared data set's, and fio's own examples in src/test/resources/fio) run with only their
 * {@code ioengine=} line changed, on a 256 MiB file device, each shortened with {@code --runtime=1} on the command
 * line (the file itself is unchanged). Unsupported options must fail listing every job's.
 */
@Timeout(300)
class JobFilesRunTest {
    @TempDir
    Path dir;

    record Run(int rc, String out, String err) {
    }

    Run bench(String... args) {
        PrintStream oldErr = System.err;
        ByteArrayOutputStream warn = new ByteArrayOutputStream();
        StringWriter err = new StringWriter();
        try {
            System.setErr(new PrintStream(warn, true, StandardCharsets.UTF_8));
            CommandLine cl = BenchCommand.commandLine();
            cl.setErr(new PrintWriter(err, true));
            int rc = cl.execute(args);
            return new Run(rc, "", err + warn.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(oldErr);
        }
    }

    Path engineChanged(Path f) throws Exception {
        List<String> lines = Files.readAllLines(f).stream()
                .map(l -> l.startsWith("ioengine=") ? "ioengine=rdmablock" : l).toList();
        return Files.write(dir.resolve(f.getFileName()), lines);
    }

    static List<Path> jobFiles() throws Exception {
        List<Path> all = new ArrayList<>();
        for (Path d : new Path[] {Path.of("/work/shared/realdata/fio"), Path.of("src/test/resources/fio")}) {
            if (Files.isDirectory(d)) {
                try (Stream<Path> s = Files.list(d)) {
                    s.filter(p -> p.toString().endsWith(".fio")).sorted().forEach(all::add);
                }
            }
        }
        return all;
    }

    @Test
    void shouldRunEveryRealJobFileWithOnlyTheEngineLineChanged() throws Exception {
        List<Path> files = jobFiles();
        assertTrue(files.size() >= 5, "job files: " + files);
        Path vol = dir.resolve("v.img");
        List<String> failed = new ArrayList<>();
        for (Path f : files) {
            FileBlockDevice.createFile(vol, 256 << 20);
            Path job = engineChanged(f);
            Path out = dir.resolve(f.getFileName() + ".out");
            Run r = bench("--file", vol.toString(), "--direct=false", "--runtime=1", "--output", out.toString(),
                    job.toString());
            String text = Files.exists(out) ? Files.readString(out) : "";
            System.out.println("== " + f.getFileName() + " rc=" + r.rc());
            r.err().lines().filter(l -> l.contains("warning")).forEach(l -> System.out.println("   " + l));
            text.lines().filter(l -> l.contains("READ:") || l.contains("WRITE:") || l.contains("latency  ")
                    || l.contains("verify  ") || l.startsWith("Run status")).forEach(l -> System.out.println("   " + l));
            if (r.rc() != 0) {
                failed.add(f.getFileName() + ": rc=" + r.rc() + " " + r.err());
            }
            if (text.contains("fio-rand-RW") || f.toString().contains("aio-read")) {
                assertEquals(1, r.err().lines().filter(l -> l.contains("ignored: the target comes from the command"
                        + " line")).count(), r.err());
            }
        }
        assertEquals(List.of(), failed);
    }

    @Test
    void shouldListTheUnsupportedOptionsOfEveryJob() throws Exception {
        Path vol = dir.resolve("v.img");
        FileBlockDevice.createFile(vol, 1 << 20);
        Path job = Files.writeString(dir.resolve("j.fio"), """
                [global]
                ioengine=rdmablock
                [a]
                fsync=1
                [b]
                rw=read
                [c]
                thinktime_spin=10
                nrfiles=4
                verify_async=2
                """);
        Run r = bench("--file", vol.toString(), job.toString());
        assertEquals(2, r.rc());
        // grouped by why: what cannot apply to a block volume says so, the rest is not supported yet
        assertTrue(r.err().contains("unsupported fio options: job 'a': fsync (not supported yet, docs/bench.md);"
                + " job 'c': thinktime_spin, verify_async (not supported yet, docs/bench.md), nrfiles (file-system"
                + " option: a block volume has no files) (rdmablock bench accepts: "), r.err());
        assertTrue(r.err().contains("random_distribution") && r.err().contains("stonewall"), r.err());
    }

    @Test
    void shouldExitTwoWithAPlainMessageForAMissingJobFileOrTrace() throws Exception {
        Path vol = dir.resolve("v.img");
        FileBlockDevice.createFile(vol, 1 << 20);
        Run r = bench("--file", vol.toString(), dir.resolve("missing.fio").toString());
        assertEquals(2, r.rc());
        assertTrue(r.err().contains("rdmablock bench: invalid JOBFILE: ") && r.err().contains("missing.fio: no such file"),
                r.err());
        Run t = bench("--file", vol.toString(), "--replay", dir.resolve("missing.trace").toString());
        assertEquals(2, t.rc());
        assertTrue(t.err().contains("missing.trace: no such file") && !t.err().contains("Exception"), t.err());
    }

    @Test
    void shouldRefuseAMisalignedTraceInBenchReplayNamingTheFirstRequest() throws Exception {
        Path vol = dir.resolve("v.img");
        FileBlockDevice.createFile(vol, 8 << 20);
        Path trace = Files.writeString(dir.resolve("t.trace"), "0.0 5 0 8 0\n1.0 5 7 8 1\n2.0 5 15 1 1\n");
        Run r = bench("--file", vol.toString(), "--lba-size", "4096", "--direct=false", "--replay", trace.toString());
        assertEquals(2, r.rc());
        assertTrue(r.err().contains("2 of 3 requests are not aligned to the 4096-byte LBA size, first: line 2"
                + " offset=3584 length=4096"), r.err());
        assertEquals(0, bench("--file", vol.toString(), "--direct=false", "--replay", trace.toString()).rc());
    }
}
