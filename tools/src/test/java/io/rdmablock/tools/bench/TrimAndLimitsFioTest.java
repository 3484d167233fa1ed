package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 41, second wave, compared with fio 3.33 itself: trims ({@code rw=trim|randtrim|trimwrite|randtrimwrite};
 * fio's psync cannot trim a regular file, ENOTTY, so fio runs {@code --ioengine=null}, which issues the same offsets),
 * {@code offset_increment} with {@code numjobs}, {@code io_size}, {@code number_ios}, {@code bsrange}; and the bounds.
 */
@Timeout(120)
class TrimAndLimitsFioTest {
    @TempDir
    Path dir;
    Path file;

    @BeforeEach
    void createFile() {
        file = dir.resolve("vol.img");
        FileBlockDevice.createFile(file, 1 << 20);
    }

    PatternFioTest.Ours ours(JobSpec... specs) throws Exception {
        PatternFioTest p = new PatternFioTest();
        p.dir = dir;
        p.file = file;
        return p.ours(specs);
    }

    /** fio's iolog actions "T|R|W:offset:len" with --ioengine=null; its first I/O once (fio 3.33 logs it twice). */
    List<String> fio(String... options) throws Exception {
        Path log = dir.resolve("fio-" + System.nanoTime() + ".log");
        List<String> args = new ArrayList<>(List.of("--name=j", "--ioengine=null", "--write_iolog=" + log,
                "--output=/dev/null"));
        for (String o : options) {
            args.add("--" + o);
        }
        LocalFio.run(dir, args);
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 5 && List.of("read", "write", "trim").contains(f[2])) {
                String a = f[2].substring(0, 1).toUpperCase() + ":" + f[3] + ":" + f[4];
                if (out.size() != 1 || !out.getLast().equals(a)) {
                    out.add(a);
                }
            }
        }
        return out;
    }

    static List<String> pattern(RecordingDevice rec) {
        synchronized (rec.ios) {
            return rec.ios.stream().map(i -> (i.trim() ? "T:" : i.read() ? "R:" : "W:") + i.offset() + ":" + i.length())
                    .toList();
        }
    }

    @Test
    void shouldTrimSequentiallyAndTrimThenWriteAsFioDoes() throws Exception {
        LocalFio.assumeInstalled();
        for (String rw : List.of("trim", "trimwrite")) {
            String[] opts = {"rw=" + rw, "bs=4k", "size=64k"};
            List<String> fio = fio(opts);
            PatternFioTest.Ours o = ours(PatternFioTest.spec("j", opts));
            assertEquals(fio, pattern(o.rec()), rw);
            FioReport.Entry e = o.outcome().entries().getFirst();
            assertEquals(16, e.trim().ios, rw);
            assertEquals(65536, e.trim().bytes, rw);
            assertEquals(rw.equals("trimwrite") ? 16 : 0, e.write().ios, rw);
            String json = FioReport.json(o.outcome().entries(), new FioReport.Cpu(null, null, null), "f");
            assertTrue(json.matches("(?s).*\"trim\"\\s*:\\s*\\{\\s*\"io_bytes\"\\s*:\\s*65536,.*"), json);
            String human = FioReport.human(o.outcome().entries(), new FioReport.Cpu(null, null, null));
            assertTrue(human.contains("  trim: IOPS=") && human.contains(" TRIM: bw="), human);
        }
    }

    @Test
    void shouldTrimRandomBlocksAndWriteEachTrimmedRange() throws Exception {
        LocalFio.assumeInstalled();
        for (String rw : List.of("randtrim", "randtrimwrite")) {
            String[] opts = {"rw=" + rw, "bs=4k", "size=64k", "offset=128k"};
            List<String> fio = fio("rw=" + rw, "bs=4k", "size=64k"); // fio 3.33 null: randtrimwrite stops with offset
            List<String> ours = pattern(ours(PatternFioTest.spec("j", opts)).rec());
            assertEquals(fio.size(), ours.size(), rw + ": fio " + fio + " ours " + ours);
            for (int i = 0; i < ours.size(); i++) {
                String[] f = ours.get(i).split(":");
                long off = Long.parseLong(f[1]);
                assertTrue(off >= 128 << 10 && off + 4096 <= 192 << 10 && off % 4096 == 0, ours.get(i));
                if (rw.equals("randtrimwrite")) {
                    assertEquals(i % 2 == 0 ? "T" : "W", f[0], ours.toString());
                    if (i % 2 == 1) {
                        assertEquals(ours.get(i - 1).substring(1), ours.get(i).substring(1), "write after its trim");
                    }
                } else {
                    assertEquals("T", f[0]);
                }
            }
        }
    }

    @Test
    void shouldStartEachCloneAtItsOffsetIncrementAsFioDoes() throws Exception {
        LocalFio.assumeInstalled();
        String[] opts = {"rw=write", "bs=4k", "size=16k", "numjobs=3", "offset_increment=64k", "offset=4k"};
        TreeSet<String> fio = new TreeSet<>(fio(opts));
        TreeSet<String> ours = new TreeSet<>(pattern(ours(PatternFioTest.spec("j", opts)).rec()));
        assertEquals(12, fio.size(), fio.toString());
        assertEquals(fio, ours);
    }

    @Test
    void shouldDoIoSizeBytesAndStopAtNumberIosAsFioDoes() throws Exception {
        LocalFio.assumeInstalled();
        String[][] jobs = {{"size=64k", "io_size=24k"}, {"size=16k", "io_size=24k"}, {"size=16k", "io_limit=40k"},
                {"size=64k", "number_ios=5"}, {"size=16k", "number_ios=6", "loops=3"}, {"size=16k", "io_size=12k",
                "loops=2"}};
        for (String[] job : jobs) {
            List<String> opts = new ArrayList<>(List.of("rw=write", "bs=4k"));
            opts.addAll(List.of(job));
            String[] a = opts.toArray(String[]::new);
            List<String> fio = fio(a);
            assertEquals(fio, pattern(ours(PatternFioTest.spec("j", a)).rec()), opts.toString());
        }
    }

    @Test
    void shouldChooseBsrangeLengthsAsFioDoes() throws Exception {
        LocalFio.assumeInstalled();
        String[] opts = {"rw=randwrite", "bsrange=4k-16k", "size=512k", "io_size=64m", "number_ios=400",
                "norandommap"}; // fio's random map shortens I/Os to free blocks; ours has none

        List<String> fio = fio(opts);
        List<String> ours = pattern(ours(PatternFioTest.spec("j", opts)).rec());
        assertEquals(fio.size(), ours.size());
        for (List<String> ios : List.of(fio, ours)) {
            TreeSet<Long> lens = new TreeSet<>();
            long sixteen = 0;
            for (String s : ios) {
                long len = Long.parseLong(s.split(":")[2]);
                lens.add(len);
                sixteen += len == 16384 ? 1 : 0;
            }
            assertEquals(new TreeSet<>(List.of(4096L, 8192L, 12288L, 16384L)), lens, ios.toString());
            // fio's min + max * u, aligned down to min: each of the 4 lengths a quarter of the draws
            assertTrue(sixteen > 70 && sixteen < 130, "16k " + sixteen + " of " + ios.size());
        }
        List<String> fixed = fio("rw=read", "bsrange=8k-8k", "size=32k");
        assertEquals(fixed, pattern(ours(PatternFioTest.spec("j", "rw=read", "bsrange=8k-8k", "size=32k")).rec()));
    }

    @Test
    void shouldRejectBadValuesBeforeAnyIo() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PatternFioTest.spec("bad", "bsrange=16k-4k"));
        assertTrue(e.getMessage().contains("bsrange") && e.getMessage().contains("'bad'")
                && e.getMessage().contains("max=256m"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PatternFioTest.spec("bad", "number_ios=0"));
        assertTrue(e.getMessage().contains("number_ios") && e.getMessage().contains("min=1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PatternFioTest.spec("bad", "io_size=lots"));
        assertTrue(e.getMessage().contains("io_size") && e.getMessage().contains("'bad'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PatternFioTest.spec("bad", "rw=trim:8k"));
        assertTrue(e.getMessage().contains("rw") && e.getMessage().contains("'bad'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PatternFioTest.spec("bad", "rw=trimwrite",
                "verify=crc32c"));
        assertTrue(e.getMessage().contains("verify") && e.getMessage().contains("'bad'"), e.getMessage());
        // offset_increment beyond the device: fails when the clones are built, before any I/O
        JobSpec j = PatternFioTest.spec("far", "rw=write", "numjobs=4", "offset_increment=512k", "size=64k");
        e = assertThrows(IllegalArgumentException.class, () -> ours(j));
        assertTrue(e.getMessage().contains("offset_increment") && e.getMessage().contains("'far'")
                && e.getMessage().contains("clone 2") && e.getMessage().contains("max=524287"), e.getMessage());
    }

    @Test
    void shouldTakeTimeoutAsRuntimeAndThreadWithoutEffect() {
        JobSpec j = JobSpec.of("t", Map.of("timeout", "3", "thread", "1"));
        assertEquals(3_000_000_000L, j.runtimeNs);
    }
}
