package io.rdmablock.cli;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs the CLI in-process with captured stdout/stderr. */
record CliRun(int exitCode, String out, String err) {
    static CliRun of(String... args) {
        return of(RdmablockCli.commandLine(), args);
    }

    static CliRun of(CommandLine cli, String... args) {
        var out = new StringWriter();
        var err = new StringWriter();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute(args);
        return new CliRun(code, out.toString(), err.toString());
    }
}
