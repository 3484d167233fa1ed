package io.rdmablock.cli;

import io.rdmablock.initiator.InitiatorConfiguration;
import io.rdmablock.mgmt.api.MgmtConfiguration;
import io.rdmablock.node.NodeCommand;
import io.rdmablock.node.NodeConfiguration;
import io.rdmablock.rdma.config.Knob;
import io.rdmablock.rdma.verbs.ProviderConfiguration;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The configuration reference (docs/configuration.md), generated from the code's configuration homes so it cannot
 * drift: the command-line options of {@code rdmablock node} and {@code rdmablock mgmt} from their picocli models
 * (names, parameter labels, defaults, {@code ${env:...}} / {@code ${sys:...}} defaults, descriptions), and the
 * {@code -D} knobs from the homes' descriptors ({@link NodeConfiguration}'s {@code *_KNOBS},
 * {@link ProviderConfiguration#KNOBS}, {@link InitiatorConfiguration#KNOBS}, {@link MgmtConfiguration#SETTINGS}).
 * Each table is one Markdown section between the marker comments {@code <!-- generated: ID begin -->} and
 * {@code <!-- generated: ID end -->}; {@link #rewrite(String)} puts the current tables between a document's markers
 * and leaves the hand-written prose around them as it is.
 */
public final class ConfigReference {
    private static final String KNOB_HEADER = "| Property | Default | Bounds | Unit | What it does |\n"
            + "|---|---|---|---|---|\n";
    private static final Pattern SYS_ENV = Pattern.compile("\\$\\{sys:([^:}]+):-\\$\\{env:([^}]+)}}");
    private static final Pattern ENV = Pattern.compile("\\$\\{env:([^}]+)}");
    private static final Pattern NAMED_PROPERTY = Pattern.compile("-D([a-z][A-Za-z0-9_.]*[A-Za-z0-9])");
    private static final Pattern NAMED_ENV = Pattern.compile("\\bRDMABLOCK_[A-Z0-9_]*[A-Z0-9]");
    private static final Pattern MARKED = Pattern.compile(
            "(<!-- generated: ([a-z0-9-]+) begin -->\n)(.*?)(<!-- generated: \\2 end -->)", Pattern.DOTALL);

    private ConfigReference() {
    }

    /**
     * {@code ConfigReference FILE}: rewrites FILE's generated sections in place (prints "unchanged" or "rewritten");
     * without an argument prints every section. Exit code 2 for more than one argument, 1 when FILE lacks a
     * section's markers. docs/configuration.md says how to run it; {@code ConfigReferenceDocTest} runs it with
     * {@code -Drdmablock.docs.write=true}.
     */
    public static void main(String[] args) throws IOException {
        if (args.length > 1) {
            System.err.println("usage: ConfigReference [FILE]");
            System.exit(2);
        }
        if (args.length == 0) {
            sections().forEach((id, table) -> System.out.println("<!-- generated: " + id + " -->\n" + table));
            return;
        }
        Path file = Path.of(args[0]);
        String doc = Files.readString(file);
        String fresh;
        try {
            fresh = rewrite(doc);
        } catch (IllegalArgumentException e) {
            System.err.println(file + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        if (fresh.equals(doc)) {
            System.out.println(file + ": unchanged");
        } else {
            Files.writeString(file, fresh);
            System.out.println(file + ": rewritten");
        }
    }

    /** Every generated table by its marker id, in the document's order. */
    public static Map<String, String> sections() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("node-options", options(CommandSpec.forAnnotatedObject(new NodeCommand())));
        m.put("node-target-properties", knobs(NodeConfiguration.TARGET_KNOBS));
        m.put("node-replication-properties", knobs(NodeConfiguration.REPLICATION_KNOBS));
        m.put("node-store-properties", knobs(NodeConfiguration.STORE_KNOBS));
        m.put("provider-properties", knobs(ProviderConfiguration.KNOBS));
        m.put("initiator-properties", knobs(InitiatorConfiguration.KNOBS));
        m.put("mgmt-options", options(CommandSpec.forAnnotatedObject(new MgmtCommand())));
        m.put("mgmt-properties", settings(MgmtConfiguration.SETTINGS));
        m.put("env-index", envIndex(RdmablockCli.commandLine()));
        return m;
    }

    /**
     * {@code doc} with the current table between each pair of markers.
     *
     * @throws IllegalArgumentException when a marker id is not a known section, or a section has no markers in
     *                                  {@code doc} (naming it)
     */
    public static String rewrite(String doc) {
        Map<String, String> sections = sections();
        List<String> seen = new ArrayList<>();
        Matcher m = MARKED.matcher(doc);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String id = m.group(2);
            String table = sections.get(id);
            if (table == null) {
                throw new IllegalArgumentException("unknown generated section '" + id + "' (known: "
                        + sections.keySet() + ")");
            }
            seen.add(id);
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + table + m.group(4)));
        }
        m.appendTail(out);
        List<String> missing = new ArrayList<>(sections.keySet());
        missing.removeAll(seen);
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("no '<!-- generated: ID begin -->' ... 'end' markers for " + missing);
        }
        return out.toString();
    }

    /** A table of a command's visible options (help and version left out). */
    static String options(CommandSpec spec) {
        spec.interpolateVariables(false); // the raw ${env:...} defaults and ${DEFAULT-VALUE} of the annotations
        StringBuilder b = new StringBuilder("| Option | Default | Env / property | What it does |\n|---|---|---|---|\n");
        for (OptionSpec o : spec.options()) {
            if (o.hidden() || o.usageHelp() || o.versionHelp()) {
                continue;
            }
            String name = String.join(", ", o.names()) + (o.arity().max() > 0 ? " " + o.paramLabel() : "");
            String raw = o.defaultValue();
            String text = String.join(" ", o.description());
            String from = sources(raw, text);
            String def;
            if (raw != null && !SYS_ENV.matcher(raw).matches() && !ENV.matcher(raw).matches()) {
                def = "`" + raw + "`";
            } else {
                // rdmablock node's --data-dir is required only without a subcommand (RequiredUnlessSubcommand)
                boolean required = o.required() || text.contains("(required)");
                def = required ? "(required)" : o.arity().max() == 0 ? "off" : "none";
            }
            text = text.replace("${DEFAULT-VALUE}", raw == null ? "none" : raw).replace("<", "&lt;")
                    .replace(">", "&gt;");
            b.append("| `").append(cell(name)).append("` | ").append(cell(def)).append(" | ").append(cell(from))
                    .append(" | ").append(cell(text)).append(" |\n");
        }
        return b.toString();
    }

    /**
     * Where an option's value comes from when it is not given: the property and environment variable of a
     * {@code ${sys:P:-${env:E}}} or {@code ${env:E}} default, else those its description names ("-DP", "env E"; the
     * command reads them itself).
     */
    static String sources(String rawDefault, String description) {
        List<String> props = new ArrayList<>();
        List<String> envs = new ArrayList<>();
        Matcher se = rawDefault == null ? null : SYS_ENV.matcher(rawDefault);
        Matcher e = rawDefault == null ? null : ENV.matcher(rawDefault);
        if (se != null && se.matches()) {
            props.add(se.group(1));
            envs.add(se.group(2));
        } else if (e != null && e.matches()) {
            envs.add(e.group(1));
        } else {
            Matcher p = NAMED_PROPERTY.matcher(description);
            while (p.find()) {
                props.add(p.group(1));
            }
            Matcher v = NAMED_ENV.matcher(description);
            while (v.find()) {
                envs.add(v.group());
            }
        }
        List<String> parts = new ArrayList<>();
        props.stream().distinct().forEach(p -> parts.add("`-D" + p + "`"));
        envs.stream().distinct().forEach(v -> parts.add("env `" + v + "`"));
        return String.join(", else ", parts);
    }

    /**
     * A table of every environment variable a command-line option of the whole command tree falls back to, with
     * the options (qualified, e.g. {@code rdmablock node --token}) that read it.
     */
    static String envIndex(CommandLine root) {
        Map<String, Map<String, List<String>>> byEnv = new TreeMap<>(); // env -> option -> commands
        Deque<CommandLine> todo = new ArrayDeque<>(List.of(root));
        Set<CommandLine> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        while (!todo.isEmpty() && seen.size() < 1000) { // bounded: the tree has about 50 commands
            CommandLine cl = todo.removeFirst();
            if (!seen.add(cl) || cl.getCommandSpec().usageMessage().hidden()) {
                continue;
            }
            CommandSpec spec = cl.getCommandSpec();
            spec.interpolateVariables(false);
            String command = spec.qualifiedName().substring(root.getCommandName().length()).trim();
            for (OptionSpec o : spec.options()) {
                if (o.hidden()) {
                    continue;
                }
                Matcher v = NAMED_ENV.matcher(sources(o.defaultValue(), String.join(" ", o.description())));
                while (v.find()) {
                    byEnv.computeIfAbsent(v.group(), k -> new TreeMap<>())
                            .computeIfAbsent(o.longestName(), k -> new ArrayList<>()).add(command);
                }
            }
            todo.addAll(cl.getSubcommands().values());
        }
        StringBuilder b = new StringBuilder("| Variable | Default of the option (`rdmablock` commands) |\n|---|---|\n");
        byEnv.forEach((env, options) -> {
            List<String> parts = new ArrayList<>();
            options.forEach((option, commands) -> parts.add("`" + option + "` of " + String.join(", ",
                    commands.stream().distinct().sorted().toList())));
            b.append("| `").append(env).append("` | ").append(String.join("; ", parts)).append(" |\n");
        });
        return b.toString();
    }

    static String knobs(List<Knob> knobs) {
        StringBuilder b = new StringBuilder(KNOB_HEADER);
        for (Knob k : knobs) {
            row(b, k.name(), k.defaultText(), k.boundsText(), k.unit(), k.description());
        }
        return b.toString();
    }

    static String settings(List<MgmtConfiguration.Setting> settings) {
        StringBuilder b = new StringBuilder(KNOB_HEADER);
        for (MgmtConfiguration.Setting s : settings) {
            row(b, s.name(), Long.toString(s.def()), s.min() + ".." + s.max(), s.unit(), s.description());
        }
        return b.toString();
    }

    private static void row(StringBuilder b, String name, String def, String bounds, String unit, String text) {
        b.append("| `").append(name).append("` | ").append(cell(def)).append(" | ").append(cell(bounds)).append(" | ")
                .append(cell(unit)).append(" | ").append(cell(text)).append(" |\n");
    }

    /** Escapes a table cell's pipes (outside code spans too: Markdown tables split on every unescaped pipe). */
    private static String cell(String s) {
        return s.replace("|", "\\|");
    }
}
