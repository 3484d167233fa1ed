package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

@Timeout(60)
class BenchCommandTest {
    @TempDir
    Path dir;

    int run(StringWriter err, String... args) {
        CommandLine cl = BenchCommand.commandLine();
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    @Test
    void shouldRunAJobFileWithCommandLineOverridesAndWriteFioJson() throws Exception {
        Path vol = dir.resolve("v.img");
        FileBlockDevice.createFile(vol, 8 << 20);
        Path job = Files.writeString(dir.resolve("j.fio"), """
                [global]
                ioengine=rdmablock
                rw=randrw
                iodepth=4
                runtime=900
                time_based
                [a]
                [b]
                offset=4m
                """);
        Path out = dir.resolve("out.json");
        StringWriter err = new StringWriter();
        int rc = run(err, "--file", vol.toString(), "--direct=false", "--runtime=1", "--output-format=json",
                "--output", out.toString(), job.toString());
        assertEquals(0, rc, err.toString());
        String json = Files.readString(out);
        assertTrue(json.contains("\"jobname\" : \"a\""), json);
        assertTrue(json.contains("\"jobname\" : \"b\""), json);
        assertTrue(json.contains("\"runtime\" : \"1\""), json); // the override is in "job options"
    }

    @Test
    void shouldExitWithBadInputForOptionsOutsideTheSubset() throws Exception {
        Path vol = dir.resolve("v.img");
        FileBlockDevice.createFile(vol, 1 << 20);
        Path job = Files.writeString(dir.resolve("j.fio"), "[a]\nioengine=rdmablock\nfsync=1\n");
        StringWriter err = new StringWriter();
        assertEquals(2, run(err, "--file", vol.toString(), job.toString()));
        assertTrue(err.toString().contains("fsync"), err.toString());
        assertEquals(2, run(new StringWriter(), "--file", vol.toString(), "--time_based", "--rw=read"));
    }

    @Test
    void shouldRejectCommandLineSizeBeyondTheDeviceButClampJobFileSize() throws Exception {
        Path vol = dir.resolve("v.img");
        FileBlockDevice.createFile(vol, 1 << 20);
        StringWriter err = new StringWriter();
        assertEquals(2, run(err, "--file", vol.toString(), "--direct=false", "--rw=read", "--size=1G"));
        assertTrue(err.toString().contains("invalid size: size=1073741824 exceeds the device from offset 0: min=4096,"
                + " max=1048576 (device size 1048576)"), err.toString());
        Path job = Files.writeString(dir.resolve("j.fio"), "[a]\nioengine=rdmablock\nrw=read\nsize=1G\n");
        Path out = dir.resolve("out.json");
        StringWriter err2 = new StringWriter();
        assertEquals(0, run(err2, "--file", vol.toString(), "--direct=false", "--output-format=json",
                "--output", out.toString(), job.toString()), err2.toString());
    }

    @Test
    void shouldFormatCountsAndSizesLikeFio() {
        assertEquals("9999", FioReport.num(9999));
        assertEquals("126k", FioReport.num(126_000));
        assertEquals("12.9k", FioReport.num(12_900));
        assertEquals("1.50M", FioReport.num(1_500_000));
        assertEquals("492MiB", FioReport.bin(492.0 * 1024 * 1024));
        assertEquals("516MB", FioReport.dec(516_000_000));
    }
}
