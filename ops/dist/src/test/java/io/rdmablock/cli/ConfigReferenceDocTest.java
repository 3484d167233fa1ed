package io.rdmablock.cli;

import io.rdmablock.initiator.InitiatorConfiguration;
import io.rdmablock.mgmt.api.MgmtConfiguration;
import io.rdmablock.node.NodeConfiguration;
import io.rdmablock.rdma.verbs.ProviderConfiguration;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * docs/configuration.md's generated tables are what {@link ConfigReference} makes from the code today. With
 * {@code -Drdmablock.docs.write=true} the test rewrites them instead of failing:
 * {@code mvn -B -pl ops/dist -am test -Dtest=ConfigReferenceDocTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Drdmablock.docs.write=true}.
 */
class ConfigReferenceDocTest {
    private static final Path DOC = Path.of(System.getProperty("user.dir")).resolve("../../docs/configuration.md")
            .normalize();
    private static final String REWRITE = "mvn -B -pl ops/dist -am test -Dtest=ConfigReferenceDocTest "
            + "-Dsurefire.failIfNoSpecifiedTests=false -Drdmablock.docs.write=true";

    @Test
    void shouldHoldTheGeneratedTables() throws IOException {
        String doc = Files.readString(DOC);
        String fresh = ConfigReference.rewrite(doc);
        if (fresh.equals(doc)) {
            return;
        }
        if (Boolean.getBoolean("rdmablock.docs.write")) {
            Files.writeString(DOC, fresh);
            System.out.println(DOC + ": rewritten");
            return;
        }
        fail(DOC + " is out of date with the code; rewrite it with\n    " + REWRITE + "\n" + diff(doc, fresh));
    }

    @Test
    void shouldListEveryOptionAndPropertyOfTheHomes() {
        Map<String, String> s = ConfigReference.sections();
        assertTrue(s.get("node-options").contains("| `--data-dir DIR` |"), s.get("node-options"));
        assertTrue(s.get("node-options").contains("| `--heartbeat-ms MS` | `500` |"), s.get("node-options"));
        assertTrue(s.get("mgmt-options").contains("| `--etcd-ca-cert PEM` | none | `-Drdmablock.mgmt.etcdCaCert`, "
                + "else env `RDMABLOCK_ETCD_CA_CERT` |"), s.get("mgmt-options"));
        assertTrue(s.get("node-options").contains("`-Drdma.provider`, else env `RDMABLOCK_RDMA_PROVIDER`"),
                s.get("node-options"));
        assertTrue(s.get("node-target-properties").contains("| `rdmablock.node.maxKatoMs` | 3600000 | "
                + "1000..86400000 | ms |"), s.get("node-target-properties"));
        assertTrue(s.get("mgmt-properties").contains("| `rdmablock.mgmt.peerLeaseMaxMs` | 60000 | 0..3600000 | ms |"),
                s.get("mgmt-properties"));
        assertTrue(s.get("env-index").contains("| `RDMABLOCK_ETCD_ENDPOINTS` | `--etcd-endpoints` of mgmt |"),
                s.get("env-index"));
        assertTrue(!s.get("mgmt-options").contains("--no-wait") && !s.get("mgmt-options").contains("--help"),
                "hidden and help options are left out: " + s.get("mgmt-options"));
    }

    /** Every property constant of a configuration home is in the reference (a new constant needs a descriptor). */
    @Test
    void shouldDocumentEveryPropertyConstantOfTheHomes() throws IllegalAccessException {
        String all = String.join("\n", ConfigReference.sections().values());
        List<String> missing = new ArrayList<>();
        int constants = 0;
        for (Class<?> home : List.of(NodeConfiguration.class, ProviderConfiguration.class,
                InitiatorConfiguration.class, MgmtConfiguration.class)) {
            for (Field f : home.getFields()) {
                if (f.getType() != String.class || !Modifier.isStatic(f.getModifiers())) {
                    continue;
                }
                String name = (String) f.get(null);
                if (!name.matches("rdma(block)?\\.[a-z][A-Za-z0-9_.]*")) {
                    continue; // e.g. ProviderConfiguration.PROVIDER_ENV
                }
                constants++;
                if (!all.contains("`" + name + "`") && !all.contains("`-D" + name + "`")) {
                    missing.add(home.getSimpleName() + "." + f.getName() + " = " + name);
                }
            }
        }
        assertTrue(constants >= 30, "property constants found: " + constants);
        assertEquals(List.of(), missing, "property constants missing from the generated reference");
    }

    @Test
    void shouldReplaceOnlyBetweenMarkersAndNameAMissingOne() {
        StringBuilder doc = new StringBuilder("# prose kept\n");
        for (String id : ConfigReference.sections().keySet()) {
            doc.append("<!-- generated: ").append(id).append(" begin -->\nstale\n<!-- generated: ").append(id)
                    .append(" end -->\ntext after ").append(id).append('\n');
        }
        String out = ConfigReference.rewrite(doc.toString());
        assertTrue(out.startsWith("# prose kept\n<!-- generated: node-options begin -->\n| Option |"), out);
        assertTrue(!out.contains("stale") && out.contains("text after env-index\n"), out);
        assertEquals(out, ConfigReference.rewrite(out), "a second rewrite changes nothing");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConfigReference.rewrite("no markers"));
        assertTrue(e.getMessage().contains("node-options"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ConfigReference.rewrite(out
                + "<!-- generated: nope begin -->\n<!-- generated: nope end -->\n"));
        assertTrue(e.getMessage().contains("'nope'"), e.getMessage());
    }

    /** The first lines that differ, with a few lines of context, as "-" (the file) and "+" (generated). */
    static String diff(String was, String now) {
        List<String> a = was.lines().toList();
        List<String> b = now.lines().toList();
        int first = 0;
        while (first < a.size() && first < b.size() && a.get(first).equals(b.get(first))) {
            first++;
        }
        int endA = a.size();
        int endB = b.size();
        while (endA > first && endB > first && a.get(endA - 1).equals(b.get(endB - 1))) {
            endA--;
            endB--;
        }
        StringBuilder out = new StringBuilder("@@ line " + (first + 1) + " @@\n");
        int shown = 0;
        for (int i = first; i < endA && shown < 20; i++, shown++) {
            out.append("- ").append(a.get(i)).append('\n');
        }
        for (int i = first; i < endB && shown < 40; i++, shown++) {
            out.append("+ ").append(b.get(i)).append('\n');
        }
        if (endA - first + endB - first > shown) {
            out.append("... (").append(endA - first + endB - first - shown).append(" more lines differ)\n");
        }
        return out.toString();
    }
}
