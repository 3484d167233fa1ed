package io.rdmablock.cli;

import picocli.CommandLine.Option;

/** {@code --output table|json} (picocli mixin). */
public final class OutputOptions {
    /** Output formats. */
    public enum Format { table, json }

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
            description = "Output format: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
    Format format;

    boolean json() {
        return format == Format.json;
    }
}
