package io.rdmablock.node;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * What {@code rdmablock node} takes from the environment when an option is absent, as docs/providers.md and
 * docs/ha.md say: the provider from {@code -Drdma.provider} / {@code RDMABLOCK_RDMA_PROVIDER}, the management URL from
 * {@code RDMABLOCK_MGMT_URL},
 * the token from {@code RDMABLOCK_TOKEN}; an option given on the command line wins.
 */
class NodeCommandTest {
    private static final Function<String, String> NONE = k -> null;

    @TempDir
    Path dir;

    private static NodeCommand parse(String... args) {
        NodeCommand c = new NodeCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    @Test
    void shouldTakeTheProviderFromThePropertyThenTheEnvironmentThenAuto() {
        NodeCommand c = parse("--data-dir", dir.toString());
        assertEquals("soft", c.providerName(Map.of("rdma.provider", "soft")::get,
                Map.of("RDMABLOCK_RDMA_PROVIDER", "memory")::get));
        assertEquals("memory", c.providerName(NONE, Map.of("RDMABLOCK_RDMA_PROVIDER", "memory")::get));
        assertEquals("auto", c.providerName(NONE, NONE));
        assertEquals("ffm", parse("--data-dir", dir.toString(), "--provider", "ffm")
                .providerName(Map.of("rdma.provider", "soft")::get, NONE));
    }

    @Test
    void shouldTakeTheManagementUrlAndTokenFromTheEnvironmentWhenNotGiven() throws Exception {
        Function<String, String> env = Map.of("RDMABLOCK_MGMT_URL", "http://10.0.0.1:8080,http://10.0.0.2:8080",
                "RDMABLOCK_TOKEN", "cluster-token")::get;
        NodeCommand c = parse("--data-dir", dir.toString());
        assertEquals("http://10.0.0.1:8080,http://10.0.0.2:8080", c.mgmtUrl(env));
        assertEquals("cluster-token", c.bearer(env));
        assertNull(c.mgmtUrl(NONE), "standalone without the option or the variable");
        assertNull(c.bearer(NONE));
        Path file = Files.writeString(dir.resolve("token"), "from-file\n");
        NodeCommand given = parse("--data-dir", dir.toString(), "--mgmt-url", "http://m:1", "--token-file",
                file.toString());
        assertEquals("http://m:1", given.mgmtUrl(env));
        assertEquals("from-file", given.bearer(env));
        assertEquals("t", parse("--data-dir", dir.toString(), "--token", "t").bearer(env));
    }
}
