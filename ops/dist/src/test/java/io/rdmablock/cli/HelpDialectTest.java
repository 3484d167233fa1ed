package io.rdmablock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Issue 40, "one CLI dialect": runs {@code --help} of {@code rdmablock} and of every subcommand, recursively, and
 * checks what every help shows: no picocli placeholder made from a field name ({@code <heartbeatMs>}: an option or
 * parameter without a paramLabel), {@code -o/--output} offering {@code table} first (never {@code text}), no
 * {@code --depth} or bare {@code --timeout} spelling shown, and the exit-code table in the top-level help and in
 * docs/cli.md ("Exit codes", linked from README.md).
 */
class HelpDialectTest {
    /** A placeholder picocli derives from a field name: {@code <name>} starting lowercase. */
    private static final Pattern FIELD_PLACEHOLDER = Pattern.compile("<([a-z][A-Za-z0-9_]*)>");
    /** Placeholders written on purpose (none today; add a label here only if it is meant to read like that). */
    private static final Set<String> INTENDED = Set.of();

    /** Every command line, keyed by its qualified name ("rdmablock volume create"). */
    private static Map<String, CommandLine> all() {
        Map<String, CommandLine> out = new LinkedHashMap<>();
        walk(RdmablockCli.commandLine(), out, new IdentityHashMap<>());
        return out;
    }

    private static void walk(CommandLine cl, Map<String, CommandLine> out, IdentityHashMap<Object, Boolean> seen) {
        if (seen.put(cl, true) != null) {
            return;
        }
        out.put(cl.getCommandSpec().qualifiedName(), cl);
        for (CommandLine sub : cl.getSubcommands().values()) {
            walk(sub, out, seen);
        }
    }

    /** {@code --help} outputs by qualified name, run once for the class. */
    private static final Map<String, CliRun> HELP = new java.util.concurrent.ConcurrentHashMap<>();

    /** Runs {@code <path> --help} on a fresh command line (once per path). */
    private static CliRun help(String qualifiedName) {
        return HELP.computeIfAbsent(qualifiedName, HelpDialectTest::runHelp);
    }

    private static CliRun runHelp(String qualifiedName) {
        List<String> args = new ArrayList<>(List.of(qualifiedName.split(" ")));
        args.removeFirst(); // "rdmablock"
        args.add("--help");
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void shouldReachEveryCommandWithItsHelp() {
        Map<String, CommandLine> commands = all();
        assertTrue(commands.size() > 30, commands.keySet().toString());
        for (String name : commands.keySet()) {
            CliRun r = help(name);
            assertEquals(0, r.exitCode(), name + " --help: " + r.err());
            assertTrue(r.out().contains("Usage: " + name + " "), name + " --help:\n" + r.out());
        }
    }

    @Test
    void shouldShowNoPlaceholderMadeFromAFieldName() {
        List<String> leaks = new ArrayList<>();
        for (String name : all().keySet()) {
            Matcher m = FIELD_PLACEHOLDER.matcher(help(name).out());
            while (m.find()) {
                if (!INTENDED.contains(m.group(1))) {
                    leaks.add(name + ": " + m.group());
                }
            }
        }
        assertTrue(leaks.isEmpty(), "placeholders from field names (give the option a paramLabel): " + leaks);
    }

    @Test
    void shouldGiveEveryOptionTakingAValueAParamLabel() {
        List<String> missing = new ArrayList<>();
        for (var e : all().entrySet()) {
            for (var arg : e.getValue().getCommandSpec().args()) {
                if (!arg.hidden() && arg.arity().max() > 0 && arg.paramLabel().startsWith("<")) {
                    String what = arg instanceof OptionSpec o ? o.longestName() : "positional " + arg.paramLabel();
                    missing.add(e.getKey() + " " + what);
                }
            }
        }
        assertTrue(missing.isEmpty(), "no paramLabel: " + missing);
    }

    @Test
    void shouldOfferTableFirstForDashO() {
        List<String> wrong = new ArrayList<>();
        for (var e : all().entrySet()) {
            OptionSpec o = e.getValue().getCommandSpec().findOption("-o");
            if (o == null || !o.longestName().equals("--output")) {
                continue;
            }
            String text = String.join(" ", o.description());
            List<String> candidates = new ArrayList<>();
            if (o.completionCandidates() != null) {
                o.completionCandidates().forEach(candidates::add);
            }
            text = text.replace("${COMPLETION-CANDIDATES}", String.join(", ", candidates))
                    .replace("${DEFAULT-VALUE}", String.valueOf(o.defaultValue()));
            int table = text.indexOf("table");
            int textWord = text.indexOf("text");
            if (table < 0 || textWord >= 0 && textWord < table || "text".equals(o.defaultValue())) {
                wrong.add(e.getKey() + ": default=" + o.defaultValue() + " '" + text + "'");
            }
        }
        assertTrue(wrong.isEmpty(), "-o must say table (text at most as a later alias): " + wrong);
    }

    @Test
    void shouldShowOneSpellingForDepthAndTimeouts() {
        List<String> wrong = new ArrayList<>();
        Pattern old = Pattern.compile("--depth\\b|--(watch-)?timeout(?![-\\w])|--ramp(?![-\\w])");
        for (String name : all().keySet()) {
            Matcher m = old.matcher(help(name).out());
            if (m.find()) {
                wrong.add(name + ": " + m.group());
            }
        }
        assertTrue(wrong.isEmpty(), "help should show --iodepth and --timeout-s/--timeout-ms: " + wrong);
    }

    @Test
    void shouldListTheExitCodesInTheTopLevelHelpAndTheCliDoc() throws IOException {
        String top = help("rdmablock").out();
        assertTrue(top.contains("Exit codes:"), top);
        String doc = Files.readString(Path.of("../../docs/cli.md"));
        for (ExitCodes.Code c : ExitCodes.TABLE) {
            assertTrue(Pattern.compile("(?m)^\\s+" + c.code() + "\\s+" + Pattern.quote(c.meaning()) + "$")
                    .matcher(top).find(), c + " missing in:\n" + top);
            assertTrue(doc.contains("| " + c.code() + " | " + c.meaning() + " |"), c + " missing in docs/cli.md");
            assertTrue(("  " + c.code() + "  " + c.meaning()).length() <= 80, c + ": longer than a help line");
        }
    }
}
