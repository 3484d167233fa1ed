package io.rdmablock.cli;

import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/**
 * {@code rdmablock completion}: prints the bash (and zsh, via {@code bashcompinit}) completion script that picocli's
 * {@link AutoComplete} generates from the whole command tree, module commands included. Install with
 * {@code rdmablock completion > /etc/bash_completion.d/rdmablock} or {@code source <(rdmablock completion)}.
 */
@Command(name = "completion", mixinStandardHelpOptions = true,
        description = "Print a bash/zsh completion script (source <(rdmablock completion)).")
final class CompletionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        var root = spec.commandLine().getParent();
        String script = AutoComplete.bash(root.getCommandName(), root);
        spec.commandLine().getOut().print(script);
        spec.commandLine().getOut().flush();
        return ExitCodes.OK;
    }
}
