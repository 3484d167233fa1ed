package io.rdmablock.initiator.cli;

import java.io.PrintStream;
import picocli.CommandLine.Option;

/**
 * How import and export move data (picocli mixin): {@code --chunk} bytes per I/O (a multiple of 4096),
 * {@code --depth} I/Os in flight (1..256), {@code --no-progress}.
 */
public final class CopyOptions {
    @Option(names = "--chunk", paramLabel = "BYTES", defaultValue = "1048576",
            description = "Bytes per I/O (default: ${DEFAULT-VALUE}).")
    int chunkBytes;

    @Option(names = "--depth", paramLabel = "N", defaultValue = "8", description = "I/Os in flight (default: ${DEFAULT-VALUE}).")
    int depth;

    @Option(names = "--no-progress", description = "Do not draw the progress bar.")
    boolean noProgress;

    /** Prints the bounds and returns false when --chunk or --depth is out of them. */
    boolean valid(String command, PrintStream err) {
        if (chunkBytes < 4096 || chunkBytes % 4096 != 0 || depth < 1 || depth > 256) {
            err.println(command + ": invalid --chunk/--depth: chunk=" + chunkBytes + " (multiple of 4096), depth=" + depth
                    + " (1..256)");
            return false;
        }
        return true;
    }
}
