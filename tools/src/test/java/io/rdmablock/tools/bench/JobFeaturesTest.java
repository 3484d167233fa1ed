package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.local.FileBlockDevice;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The fio options of issue 17, each run end to end on a {@link FileBlockDevice}. */
@Timeout(120)
class JobFeaturesTest {
    @TempDir
    Path dir;
    Path file;

    @BeforeEach
    void createFile() {
        file = dir.resolve("vol.img");
        FileBlockDevice.createFile(file, 16 << 20);
    }

    Supplier<BlockDevice> devices() {
        return () -> new FileBlockDevice(file, 512, false, 8);
    }

    static JobSpec spec(String name, String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return JobSpec.of(name, m);
    }

    BenchRun.Outcome run(Supplier<BlockDevice> devs, JobSpec... specs) throws Exception {
        return BenchRun.run(new ArrayList<>(List.of(specs)), null, devs, null, BenchRun.Progress.none(), dir);
    }

    @Test
    void shouldRunStonewalledJobsInOrderWithAGroupEach() throws Exception {
        JobSpec w = spec("w", "rw", "write", "size", "1m", "verify", "crc32c", "do_verify", "0",
                "verify_state_save", "1");
        JobSpec r = spec("w", "rw", "read", "size", "1m", "verify", "crc32c", "verify_state_load", "1",
                "stonewall", "");
        JobSpec g = spec("g", "rw", "randread", "size", "1m", "new_group", "1");
        BenchRun.Outcome o = run(devices(), w, r, g);
        // the read job loads the state the write job saved: only possible if the write phase finished first
        assertEquals(List.of(0, 1, 2), o.entries().stream().map(FioReport.Entry::groupId).toList());
        assertEquals(List.of(0, 1, 1), List.of(w.phase, r.phase, g.phase));
        assertEquals(0, o.entries().get(1).error(), o.entries().get(1).messages().toString());
        assertEquals(256, o.entries().get(1).verifiedBlocks());
        String human = FioReport.human(o.entries(), o.cpu());
        assertTrue(human.contains("Run status group 1") && human.contains("Run status group 2"), human);
        assertTrue(FioReport.json(o.entries(), o.cpu(), "v").contains("\"groupid\" : 2"));
    }

    @Test
    void shouldChooseTheSameOffsetsWithRandrepeatAndOthersWithout() {
        JobSpec a = spec("a", "rw", "randrw", "bssplit", "4k/50:16k/50", "random_distribution", "zipf:1.1");
        JobSpec b = spec("a", "rw", "randrw", "bssplit", "4k/50:16k/50", "random_distribution", "zipf:1.1");
        JobSpec c = spec("a", "rw", "randrw", "bssplit", "4k/50:16k/50", "random_distribution", "zipf:1.1",
                "randseed", "7");
        IoChooser x = new IoChooser(a, 0, 16 << 20, 512, a.seed());
        IoChooser y = new IoChooser(b, 0, 16 << 20, 512, b.seed());
        IoChooser z = new IoChooser(c, 0, 16 << 20, 512, c.seed());
        int same = 0;
        for (int i = 0; i < 1000; i++) {
            IoChooser.Choice p = x.next();
            assertEquals(p, y.next());
            same += p.equals(z.next()) ? 1 : 0;
        }
        assertTrue(same < 500, "randseed=7 gave " + same + " equal choices of 1000");
        assertNotEquals(spec("r", "randrepeat", "0").seed(), spec("r", "randrepeat", "0").seed());
    }

    @Test
    void shouldSplitBlockSizesPerDirectionAsFiosReadWriteLists() {
        // fio's examples/cmdprio-bssplit.fio: reads 64k 40% / 1m 60%, writes all 1m (options.c str_split_parse)
        JobSpec s = spec("a", "rw", "randrw", "bssplit", "64k/40:1024k/60,1024k/100");
        IoChooser c = new IoChooser(s, 0, 64 << 20, 512, 1);
        int reads = 0;
        int small = 0;
        for (int i = 0; i < 4000; i++) {
            IoChooser.Choice x = c.next();
            if (x.read()) {
                reads++;
                small += x.lengthBytes() == 65536 ? 1 : 0;
                assertTrue(x.lengthBytes() == 65536 || x.lengthBytes() == 1 << 20, "read " + x.lengthBytes());
            } else {
                assertEquals(1 << 20, x.lengthBytes(), "every write is 1m");
            }
        }
        // 40% of ~2000 reads: binomial sd ~22, so 5 sd either side
        assertTrue(Math.abs(small - 0.4 * reads) < 5 * Math.sqrt(reads * 0.24), small + " of " + reads + " reads 64k");
        // one list: every direction
        JobSpec one = spec("b", "rw", "randrw", "bssplit", "4k/100");
        IoChooser d = new IoChooser(one, 0, 64 << 20, 512, 1);
        for (int i = 0; i < 100; i++) {
            assertEquals(4096, d.next().lengthBytes());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> spec("c", "bssplit", "64k/40:1024k/x"));
        assertTrue(e.getMessage().startsWith("invalid bssplit: '64k/40:1024k/x', percentage 'x' is not a number"),
                e.getMessage());
    }

    @Test
    void shouldAlignRandomOffsetsToBlockalign() {
        JobSpec s = spec("a", "rw", "randread", "bs", "4k", "blockalign", "64k");
        IoChooser c = new IoChooser(s, 1 << 20, 8 << 20, 512, 1);
        for (int i = 0; i < 1000; i++) {
            long off = c.next().offsetBytes();
            assertEquals(0, (off - (1 << 20)) % 65536, "offset " + off);
            assertTrue(off + 4096 <= 9 << 20);
        }
        assertThrows(IllegalArgumentException.class, () -> new IoChooser(spec("b", "rw", "randread", "blockalign",
                "1000"), 0, 8 << 20, 512, 1));
    }

    @Test
    void shouldSayWhichGeneratorIsUsed() {
        JobSpec s = spec("a", "random_generator", "lfsr");
        assertTrue(s.warnings.iterator().next().contains("SplitMix64"), s.warnings.toString());
        assertThrows(IllegalArgumentException.class, () -> spec("a", "random_generator", "mt19937"));
    }

    @Test
    void shouldRepeatTheRegionForLoops() throws Exception {
        BenchRun.Outcome o = run(devices(), spec("l", "rw", "write", "bs", "4k", "size", "1m", "loops", "3"));
        assertEquals(3 * 256, o.entries().getFirst().write().ios);
    }

    @Test
    void shouldCapIopsWithRateIops() throws Exception {
        BenchRun.Outcome o = run(devices(), spec("r", "rw", "randread", "rate_iops", "200", "runtime", "1",
                "time_based", "1", "iodepth", "8"));
        FioReport.Entry e = o.entries().getFirst();
        double iops = e.read().ios / (e.runtimeNs() / 1e9);
        assertTrue(iops <= 200 * 1.15 && e.read().ios > 0, "iops " + iops);
    }

    @Test
    void shouldPauseForThinktime() throws Exception {
        // 20 ms after every 10 I/Os: at most ~ (1 s / 20 ms) * 10 = 500 I/Os in a second
        BenchRun.Outcome o = run(devices(), spec("t", "rw", "randread", "thinktime", "20ms", "thinktime_blocks", "10",
                "runtime", "1", "time_based", "1"));
        long ios = o.entries().getFirst().read().ios;
        assertTrue(ios > 0 && ios <= 560, "ios " + ios);
    }

    @Test
    void shouldStartAfterStartdelayAndLeaveItOutOfTheRuntime() throws Exception {
        long t0 = System.nanoTime();
        BenchRun.Outcome o = run(devices(), spec("d", "rw", "read", "size", "64k", "startdelay", "300ms"));
        assertTrue(System.nanoTime() - t0 >= 300_000_000L);
        assertTrue(o.entries().getFirst().runtimeNs() < 300_000_000L, "runtime " + o.entries().getFirst().runtimeNs());
    }

    @Test
    void shouldVerifyDuringTheRunWithVerifyBacklog() throws Exception {
        BenchRun.Outcome o = run(devices(), spec("b", "rw", "randwrite", "size", "2m", "verify", "crc32c",
                "verify_backlog", "16", "do_verify", "0", "iodepth", "4"));
        FioReport.Entry e = o.entries().getFirst();
        assertEquals(0, e.error(), e.messages().toString());
        assertTrue(e.verifiedBlocks() > 100, "verified " + e.verifiedBlocks());
    }

    @Test
    void shouldSearchTheQueueDepthForTheLatencyTargetAndReportIt() throws Exception {
        // 1 ms per I/O in flight: depth d takes ~d ms, so a 20 ms target at the median allows a depth of about 19;
        // the median keeps scheduling stalls of this shared machine from failing the small depths
        Supplier<BlockDevice> slow = () -> new FaultyDevice(new FileBlockDevice(file, 512, false, 64),
                FaultyDevice.Fault.NONE, 0, 1000);
        BenchRun.Outcome o = run(slow, spec("lt", "rw", "randread", "iodepth", "64", "latency_target", "20ms",
                "latency_window", "300ms", "latency_percentile", "50", "runtime", "30", "time_based", "1"));
        FioReport.Entry e = o.entries().getFirst();
        assertEquals(0, e.error(), e.messages().toString());
        assertTrue(e.latencyDepth() >= 3 && e.latencyDepth() < 40, "depth " + e.latencyDepth());
        assertTrue(FioReport.json(o.entries(), o.cpu(), "v").contains("\"latency_depth\" : " + e.latencyDepth()));
        assertTrue(e.latencySettled(), "the search should finish before the 30 s runtime");
        assertTrue(FioReport.human(o.entries(), o.cpu()).contains("depth=" + e.latencyDepth() + " (searched 1..64)"));
    }

    @Test
    void shouldFailWithEtimedoutWhenDepthOneMissesTheTarget() throws Exception {
        Supplier<BlockDevice> slow = () -> new FaultyDevice(new FileBlockDevice(file, 512, false, 8),
                FaultyDevice.Fault.NONE, 0, 2000);
        BenchRun.Outcome o = run(slow, spec("lt", "rw", "randread", "iodepth", "8", "latency_target", "100us",
                "runtime", "5", "time_based", "1"));
        FioReport.Entry e = o.entries().getFirst();
        assertEquals(110, e.error());
        assertTrue(e.messages().getFirst().contains("exceeds specified max"), e.messages().toString());
    }
}
