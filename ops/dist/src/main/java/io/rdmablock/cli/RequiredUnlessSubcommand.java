package io.rdmablock.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Lets a command with required options also have subcommands that do not need them: {@code rdmablock node
 * --data-dir D} runs a storage node ({@code --data-dir} required) while {@code rdmablock node list} needs no
 * {@code --data-dir}. picocli checks a parent's required options even when a subcommand follows, so
 * {@link #apply} makes them optional in the model and {@link #strategy} checks them again when that command
 * itself is the one being run, answering the same "Missing required option" usage error (exit code 2).
 */
final class RequiredUnlessSubcommand {
    /** Command → the options made optional (weak keys: a command line and its model may be dropped). */
    private static final Map<CommandSpec, List<OptionSpec>> RELAXED =
            Collections.synchronizedMap(new WeakHashMap<>());

    private RequiredUnlessSubcommand() {
    }

    /** Makes the required options of {@code cmd} optional, remembering them for {@link #strategy}. */
    static void apply(CommandLine cmd) {
        CommandSpec spec = cmd.getCommandSpec();
        var relaxed = new ArrayList<OptionSpec>();
        for (OptionSpec option : List.copyOf(spec.options())) {
            if (option.required()) {
                spec.remove(option);
                OptionSpec optional = OptionSpec.builder(option).required(false).build();
                spec.addOption(optional);
                relaxed.add(optional);
            }
        }
        RELAXED.put(spec, relaxed);
    }

    /** @return a strategy that checks relaxed options of the command actually run, then runs {@code next} */
    static CommandLine.IExecutionStrategy strategy(CommandLine.IExecutionStrategy next) {
        return parseResult -> {
            CommandLine.ParseResult last = parseResult;
            while (last.hasSubcommand()) {
                last = last.subcommand();
            }
            List<OptionSpec> relaxed = RELAXED.get(last.commandSpec());
            if (relaxed != null) {
                var missing = new ArrayList<String>();
                for (OptionSpec option : relaxed) {
                    if (!last.hasMatchedOption(option)) {
                        missing.add("'" + option.longestName() + "=" + option.paramLabel() + "'");
                    }
                }
                if (!missing.isEmpty()) {
                    throw new CommandLine.ParameterException(last.commandSpec().commandLine(),
                            "Missing required option" + (missing.size() > 1 ? "s: " : ": ") + String.join(", ", missing));
                }
            }
            return next.execute(parseResult);
        };
    }
}
