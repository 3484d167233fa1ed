package io.rdmablock.tools.copy;

import java.io.PrintStream;
import picocli.CommandLine.Option;

/**
 * How import and export move data (picocli mixin): {@code --chunk} bytes per I/O (a multiple of 4096),
 * {@code --depth} I/Os in flight (1..256), {@code --no-progress}, {@code -o/--output text|json} (json: the result as
 * one JSON object on stdout, a failure as {@code {"error": ..., "exitCode": N}} on stderr).
 */
public final class CopyOptions {
    @Option(names = "--chunk", paramLabel = "BYTES", defaultValue = "1048576",
            description = "Bytes per I/O (default: ${DEFAULT-VALUE}).")
    int chunkBytes;

    @Option(names = "--depth", paramLabel = "N", defaultValue = "8", description = "I/Os in flight (default: ${DEFAULT-VALUE}).")
    int depth;

    @Option(names = "--no-progress", description = "Do not draw the progress bar.")
    boolean noProgress;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text",
            description = "text (summary on stderr) or json (result object on stdout) (default: ${DEFAULT-VALUE}).")
    String output;

    boolean json() {
        return "json".equals(output);
    }

    /** With --output json: prints {@code fields} as one JSON object on stdout. */
    void result(java.util.Map<String, Object> fields) {
        if (json()) {
            System.out.println(io.rdmablock.mgmt.client.Json.write(fields));
            System.out.flush();
        }
    }

    /** Prints a failure: {@code <command> failed: message}, or with --output json a JSON object. */
    void failure(PrintStream err, String command, String message, int exitCode) {
        err.println(json() ? io.rdmablock.mgmt.client.Json.write(java.util.Map.of("error", command + " failed: "
                + message, "exitCode", exitCode)) : command + " failed: " + message);
    }

    /** Prints the bounds and returns false when --chunk or --depth is out of them. */
    boolean valid(String command, PrintStream err) {
        if (!"text".equals(output) && !json()) {
            err.println(command + ": invalid --output: --output=" + output + ", must be one of text, json");
            return false;
        }
        if (chunkBytes < 4096 || chunkBytes % 4096 != 0 || depth < 1 || depth > 256) {
            err.println(command + ": invalid --chunk/--depth: chunk=" + chunkBytes + " (multiple of 4096), depth=" + depth
                    + " (1..256)");
            return false;
        }
        return true;
    }
}
