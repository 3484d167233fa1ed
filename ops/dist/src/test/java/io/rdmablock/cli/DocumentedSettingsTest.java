package io.rdmablock.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every {@code RDMABLOCK_*} environment variable and every {@code rdmablock.*} / {@code rdma.*} system property named
 * in README.md, docs/ (any depth), ops/systemd/*.env, ops/'s Markdown files and ops/'s scripts (their help text) is
 * read somewhere: a property or variable of a process by the main code (a string literal {@code "NAME"}, or a picocli
 * {@code ${env:NAME}} default), a test property ({@code rdmablock.test.*}, {@code rdmablock.e2e.*}, ...) by the test
 * code, and a variable of the ops/ scripts and systemd units: when README.md or docs/ or an env file names it, by
 * the files {@link #SCRIPT_ONLY} lists for it (each checked to read it: {@code $NAME} or {@code ${NAME}}); when only
 * ops/ files name it (a script's help, an ops/ README), by any ops/ script or unit. A documented name nothing reads
 * fails the test with where it is documented.
 */
class DocumentedSettingsTest {
    private static final Path REPO = Path.of(System.getProperty("user.dir")).resolve("../..").normalize();

    private static final Pattern ENV = Pattern.compile("(?<![A-Za-z0-9_])RDMABLOCK_[A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_*])");
    private static final Pattern PROPERTY = Pattern.compile(
            "(?<![\\w.\\-/])(?:-D)?(rdma(?:block)?\\.[a-z][\\w.]*[A-Za-z0-9])(?!\\w|\\.[\\w*<])");
    /** Test properties: read by the test code (JUnit tests, e2e, chaos and performance runs). */
    private static final List<String> TEST_PROPERTY_PREFIXES = List.of("rdmablock.test.", "rdmablock.e2e.",
            "rdmablock.chaos", "rdmablock.perf", "rdmablock.docs.");
    /** Names that look like properties but are not (with why). */
    private static final Map<String, String> NOT_PROPERTIES = Map.of(
            "rdmablock.token", "the dashboard's sessionStorage key (ops/dashboard-test checks it)",
            "rdmablock.caller", "a Vert.x routing-context key (NodeCredentials.CALLER)",
            "rdmablock.operation", "a Vert.x routing-context key (MgmtVerticle)",
            "rdmablock.requestTimer", "a Vert.x routing-context key (HttpFaults)");

    /**
     * Variables read only by ops/ scripts or systemd units (not by the Java code), documented elsewhere than in the
     * reader itself (README, docs/, the .env files, another script's help): the files that read them.
     */
    static final Map<String, List<String>> SCRIPT_ONLY = Map.ofEntries(
            Map.entry("RDMABLOCK_JAVA_OPTS", List.of("ops/bin/rdmablock")),
            Map.entry("RDMABLOCK_NO_BUILD", List.of("ops/bin/rdmablock")),
            Map.entry("RDMABLOCK_NODE_ARGS", List.of("ops/cluster", "ops/bench/rebuild")),
            Map.entry("RDMABLOCK_REBUILD", List.of("ops/bin/rdmablock")),
            Map.entry("RDMABLOCK_LISTEN", List.of("ops/systemd/rdmablock-node.service")),
            Map.entry("RDMABLOCK_DATA_DIR", List.of("ops/systemd/rdmablock-node.service")),
            Map.entry("RDMABLOCK_NODE_ID", List.of("ops/systemd/rdmablock-node.service")),
            Map.entry("RDMABLOCK_METRICS_LISTEN", List.of("ops/systemd/rdmablock-node.service")),
            Map.entry("RDMABLOCK_NODE_OPTS", List.of("ops/systemd/rdmablock-node.service")),
            Map.entry("RDMABLOCK_PROVIDER", List.of("ops/systemd/rdmablock-node.service")),
            Map.entry("RDMABLOCK_TOKEN_FILE", List.of("ops/systemd/rdmablock-node.service",
                    "ops/systemd/rdmablock-mgmt.service")),
            Map.entry("RDMABLOCK_MGMT_LISTEN", List.of("ops/systemd/rdmablock-mgmt.service")),
            Map.entry("RDMABLOCK_NODE_TIMEOUT_MS", List.of("ops/systemd/rdmablock-mgmt.service")),
            Map.entry("RDMABLOCK_TEST_CHAOS", List.of("ops/test")),
            Map.entry("RDMABLOCK_TEST_CHAOS_ARGS", List.of("ops/test")),
            Map.entry("RDMABLOCK_TEST_CHAOS_BOUND_S", List.of("ops/test")),
            Map.entry("RDMABLOCK_TEST_CHAOS_CYCLES", List.of("ops/test")),
            Map.entry("RDMABLOCK_TEST_CHAOS_KINDS", List.of("ops/test")),
            Map.entry("RDMABLOCK_TEST_CHAOS_SNAPSHOT_S", List.of("ops/test")),
            Map.entry("RDMABLOCK_VM_FAILOVER_MAX_PAUSE_S", List.of("ops/rdma-vm/lib/linux-failover")),
            Map.entry("RDMABLOCK_VM_E2E_RXE_ONLY", List.of("ops/rdma-vm/run-tests")),
            Map.entry("RDMABLOCK_VM_DEVICES", List.of("ops/rdma-vm/run-tests")),
            Map.entry("RDMABLOCK_VM_E2E", List.of("ops/rdma-vm/run-tests")),
            Map.entry("RDMABLOCK_VM_SUITE", List.of("ops/rdma-vm/run-tests")),
            Map.entry("RDMABLOCK_VM_LINUX_PARTS", List.of("ops/rdma-vm/run-tests", "ops/rdma-vm/lib/linux-interop")),
            Map.entry("RDMABLOCK_VM_LINUX_TCP_DEVICES", List.of("ops/rdma-vm/run-tests", "ops/rdma-vm/lib/linux-interop")),
            Map.entry("RDMABLOCK_VM_LINUX_TCP_TARGET", List.of("ops/rdma-vm/lib/linux-tcp")),
            Map.entry("RDMABLOCK_VM_LINUX_TCP_EXT4", List.of("ops/rdma-vm/run-tests", "ops/rdma-vm/lib/linux-tcp")),
            Map.entry("RDMABLOCK_ADVERTISE_HOST", List.of("ops/systemd/rdmablock-node.service")),
            Map.entry("RDMABLOCK_ADVERTISE_URL", List.of("ops/systemd/rdmablock-mgmt.service")),
            Map.entry("RDMABLOCK_MGMT_OPTS", List.of("ops/systemd/rdmablock-mgmt.service")),
            Map.entry("RDMABLOCK_READ_TOKEN_FILE", List.of("ops/systemd/rdmablock-mgmt.service")),
            Map.entry("RDMABLOCK_TLS_CERT", List.of("ops/systemd/rdmablock-mgmt.service")),
            Map.entry("RDMABLOCK_TLS_KEY", List.of("ops/systemd/rdmablock-mgmt.service")),
            Map.entry("RDMABLOCK_CERT_DAYS", List.of("ops/systemd/make-cluster-files")),
            Map.entry("RDMABLOCK_TEST_DEPLOY", List.of("ops/test")),
            Map.entry("RDMABLOCK_TEST_DEPLOY_BOUND_S", List.of("ops/test")));

    /** Variables the ops/ scripts set for the scripts they run (documented as given to them, read by none of ours). */
    static final Map<String, String> SET_FOR_SCRIPTS = Map.of("RDMABLOCK_VM", "ops/rdma-vm/run-in-vm");

    @Test
    void shouldReadEveryDocumentedVariableAndProperty() throws IOException {
        String main = javaSources("src/main/java");
        String tests = javaSources("src/test/java");
        Map<String, Set<String>> envs = new TreeMap<>();
        Map<String, Set<String>> props = new TreeMap<>();
        List<Path> docs = documents();
        assertTrue(docs.size() >= 20, "too few documents found under " + REPO + ": " + docs);
        for (Path doc : docs) {
            List<String> lines = Files.readAllLines(doc, StandardCharsets.ISO_8859_1);
            for (int i = 0; i < lines.size(); i++) {
                String where = REPO.relativize(doc) + ":" + (i + 1);
                Matcher e = ENV.matcher(lines.get(i));
                while (e.find()) {
                    envs.computeIfAbsent(e.group(), k -> new TreeSet<>()).add(where);
                }
                Matcher p = PROPERTY.matcher(lines.get(i));
                while (p.find()) {
                    props.computeIfAbsent(p.group(1), k -> new TreeSet<>()).add(where);
                }
            }
        }
        assertTrue(envs.containsKey("RDMABLOCK_TOKEN") && props.containsKey("rdmablock.node.storeWaitMin"),
                "the scan found neither RDMABLOCK_TOKEN nor rdmablock.node.storeWaitMin: " + envs.keySet());

        List<String> ignored = new ArrayList<>();
        envs.forEach((name, where) -> {
            if (readByJava(main, name) || SCRIPT_ONLY.containsKey(name) || SET_FOR_SCRIPTS.containsKey(name)) {
                return;
            }
            // named only under ops/ (a script's help, an ops/ README): read by an ops/ script or unit
            boolean opsOnly = where.stream().allMatch(w -> w.startsWith("ops/"));
            List<String> readers = docs.stream().filter(d -> readByScript(d, name))
                    .map(d -> REPO.relativize(d).toString()).toList();
            if (!opsOnly || readers.isEmpty()) {
                ignored.add(name + " (documented at " + where + "; " + (readers.isEmpty() ? "read by nothing"
                        : "read by " + readers + ": if only they read it, add it to SCRIPT_ONLY") + ")");
            }
        });
        props.forEach((name, where) -> {
            boolean test = TEST_PROPERTY_PREFIXES.stream().anyMatch(name::startsWith);
            if (NOT_PROPERTIES.containsKey(name) || readByJava(main, name) || test && readByJava(tests, name)) {
                return;
            }
            ignored.add(name + " (documented at " + where + ")");
        });
        assertEquals(List.of(), ignored, "documented but read by no code (neither the main code nor, for a test "
                + "property, the tests, nor an ops/ script or unit):");
    }

    /** The other way: every variable and property the main code reads is on the configuration reference page. */
    @Test
    void shouldListEveryVariableAndPropertyTheCodeReadsInTheReference() throws IOException {
        String main = javaSources("src/main/java");
        String reference = Files.readString(REPO.resolve("docs/configuration.md"));
        Set<String> names = new TreeSet<>();
        Matcher e = Pattern.compile("\"(RDMABLOCK_[A-Z0-9_]+)\"|env:(RDMABLOCK_[A-Z0-9_]+)").matcher(main);
        while (e.find()) {
            names.add(e.group(1) != null ? e.group(1) : e.group(2));
        }
        Matcher p = Pattern.compile("\"(rdma(?:block)?\\.[a-z][A-Za-z0-9_.]*[A-Za-z0-9])\"").matcher(main);
        while (p.find()) {
            names.add(p.group(1));
        }
        assertTrue(names.contains("RDMABLOCK_TOKEN") && names.contains("rdmablock.node.storeWaitMin"), names::toString);
        List<String> missing = names.stream().filter(n -> !NOT_PROPERTIES.containsKey(n))
                .filter(n -> !reference.contains("`" + n + "`") && !reference.contains("`-D" + n + "`")).toList();
        assertEquals(List.of(), missing, "read by the code but not in docs/configuration.md");
    }

    /** The explicit lists stay true: each reader still reads its variable. */
    @Test
    void shouldListOnlyVariablesTheScriptsRead() throws IOException {
        List<String> stale = new ArrayList<>();
        for (var e : SCRIPT_ONLY.entrySet()) {
            for (String reader : e.getValue()) {
                if (!readByScript(REPO.resolve(reader), e.getKey())) {
                    stale.add(e.getKey() + " is not read by " + reader);
                }
            }
        }
        for (var e : SET_FOR_SCRIPTS.entrySet()) {
            if (!Files.readString(REPO.resolve(e.getValue())).contains(e.getKey() + "=")) {
                stale.add(e.getKey() + " is not set by " + e.getValue());
            }
        }
        assertEquals(List.of(), stale);
    }

    /** The patterns find what they should and leave prefixes and package names alone. */
    @Test
    void shouldRecogniseNamesButNotPrefixes() {
        assertEquals(List.of("RDMABLOCK_TOKEN", "RDMABLOCK_A_B"),
                all(ENV, "env RDMABLOCK_TOKEN, RDMABLOCK_TEST_* and $RDMABLOCK_A_B.", 0));
        assertEquals(List.of("rdmablock.node.maxKatoMs", "rdma.provider", "rdmablock.store.backend"),
                all(PROPERTY, "-Drdmablock.node.maxKatoMs=1 `rdma.provider`, io.rdmablock.node.X, rdmablock.node.*,"
                        + " rdmablock-node.service, set rdmablock.store.backend.", 1));
    }

    private static List<String> all(Pattern p, String text, int group) {
        List<String> out = new ArrayList<>();
        Matcher m = p.matcher(text);
        while (m.find()) {
            out.add(m.group(group));
        }
        return out;
    }

    private static boolean readByJava(String sources, String name) {
        return sources.contains("\"" + name + "\"") || sources.contains("env:" + name + "}")
                || sources.contains("env:" + name + ":");
    }

    /** Whether {@code file} (a script or a unit) expands {@code $NAME} / {@code ${NAME...}}. */
    private static boolean readByScript(Path file, String name) {
        if (!file.startsWith(REPO.resolve("ops")) || file.toString().endsWith(".md")
                || file.toString().endsWith(".env")) {
            return false;
        }
        try {
            return Pattern.compile("\\$\\{?" + name + "(?![A-Za-z0-9_])|environ(\\.get\\(|\\[)[\"']" + name + "[\"']")
                    .matcher(Files.readString(file, StandardCharsets.ISO_8859_1)).find();
        } catch (IOException e) {
            return false;
        }
    }

    /** README.md, docs/ (any depth), ops/systemd/*.env and ops/'s Markdown files and scripts (not build output). */
    private static List<Path> documents() throws IOException {
        List<Path> out = new ArrayList<>();
        out.add(REPO.resolve("README.md"));
        try (Stream<Path> s = Files.walk(REPO.resolve("docs"), 8)) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(out::add);
        }
        try (Stream<Path> s = Files.walk(REPO.resolve("ops"), 8)) {
            s.filter(Files::isRegularFile).filter(p -> !p.toString().contains("/target/")
                    && !p.toString().contains("/src/")).filter(DocumentedSettingsTest::isDocOrScript).sorted()
                    .forEach(out::add);
        }
        return out;
    }

    private static boolean isDocOrScript(Path p) {
        String n = p.getFileName().toString();
        if (n.endsWith(".md") || n.endsWith(".env") || n.endsWith(".sh") || n.endsWith(".py")) {
            return true;
        }
        try (var in = Files.newInputStream(p)) {
            byte[] head = in.readNBytes(2);
            return head.length == 2 && head[0] == '#' && head[1] == '!';
        } catch (IOException e) {
            return false;
        }
    }

    /** Every Java file under a {@code <module>/src/main/java} (or test) folder of the repository, concatenated. */
    private static String javaSources(String folder) throws IOException {
        List<Path> roots = new ArrayList<>();
        for (Path parent : List.of(REPO, REPO.resolve("ops"))) {
            try (Stream<Path> s = Files.list(parent)) {
                s.map(m -> m.resolve(folder)).filter(Files::isDirectory).forEach(roots::add);
            }
        }
        assertTrue(roots.size() >= 8, "modules with " + folder + ": " + roots);
        StringBuilder b = new StringBuilder();
        for (Path root : roots) {
            try (Stream<Path> s = Files.walk(root, 16)) {
                for (Path p : s.filter(p -> p.toString().endsWith(".java")).toList()) {
                    b.append(Files.readString(p)).append('\n');
                }
            }
        }
        return b.toString();
    }
}
