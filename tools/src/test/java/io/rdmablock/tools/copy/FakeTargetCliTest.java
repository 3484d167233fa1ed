package io.rdmablock.tools.copy;

import io.rdmablock.nvmf.host.FakeTarget;
import io.rdmablock.tools.bench.BenchCommand;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The CLI's direct mode ({@code --address HOST:PORT --subnqn NQN --hostnqn NQN --nsid N}) against a foreign, nvmet-like
 * target ({@link FakeTarget#nvmetLike()}): import, export and bench work, the hostnqn given is the one sent.
 */
@Timeout(120)
class FakeTargetCliTest {
    static final String SUBNQN = "nqn.2014-08.org.example:nvmet-cli";
    static final String HOSTNQN = "nqn.2014-08.org.example:host-cli";
    VerbsProvider provider;
    FakeTarget target;
    InetSocketAddress address;
    @TempDir
    Path dir;

    @BeforeEach
    void setUp() {
        provider = Providers.select("soft");
        target = new FakeTarget(provider, SUBNQN, 8L << 20, 8L << 20, 512, 1 << 20, true).nvmetLike();
        target.activeNsids = new int[]{1, 3};
        address = target.start();
    }

    @AfterEach
    void tearDown() {
        target.close();
        provider.close();
    }

    String[] connect(String... more) {
        String[] base = {"--address", "127.0.0.1:" + address.getPort(), "--subnqn", SUBNQN, "--hostnqn", HOSTNQN,
                "--nsid", "3", "--provider", "soft"};
        String[] r = new String[base.length + more.length];
        System.arraycopy(base, 0, r, 0, base.length);
        System.arraycopy(more, 0, r, base.length, more.length);
        return r;
    }

    @Test
    void shouldImportExportAndBenchAgainstAForeignTargetInDirectMode() throws Exception {
        byte[] image = new byte[3 << 20];
        new Random(5).nextBytes(image);
        Path in = Files.write(dir.resolve("in.img"), image);
        Path out = dir.resolve("out.img");
        assertEquals(0, new CommandLine(new ImportCommand()).execute(connect("--file", in.toString())));
        assertEquals(HOSTNQN, target.lastHostnqn);
        assertEquals(0, new CommandLine(new ExportCommand()).execute(connect("--file", out.toString(), "--length",
                String.valueOf(image.length))));
        assertArrayEquals(image, Files.readAllBytes(out));
        assertEquals(0, new CommandLine(new BenchCommand()).execute(connect("--rw", "randrw", "--bs", "4k",
                "--size", "1m", "--iodepth", "4", "--verify", "crc32c")));
        assertEquals(0, target.refusals.get(), "nvmet would refuse: " + target.lastRefusal);
    }
}
