package io.rdmablock.cli;

import io.rdmablock.mgmt.client.MgmtClient;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/**
 * Base of the subcommands that make one management REST call and print its answer: the connection options
 * ({@link MgmtOptions}), the output format ({@link OutputOptions}) and the command's standard output. Picocli reads
 * the annotated fields of this superclass for every subclass.
 */
abstract class MgmtCall implements Callable<Integer> {
    @Spec
    CommandSpec spec;
    @Mixin
    MgmtOptions mgmt;
    @Mixin
    OutputOptions output;

    /** The REST client for {@code --mgmt-url} / {@code --token}. */
    MgmtClient client() {
        return mgmt.client();
    }

    /** The command's standard output. */
    PrintWriter out() {
        return spec.commandLine().getOut();
    }
}
