package io.rdmablock.tools.copy;

import io.rdmablock.tools.device.TableOrJson;
import java.io.PrintStream;
import picocli.CommandLine.Option;

/**
 * How import and export move data (picocli mixin): {@code --chunk} bytes per I/O (a multiple of 4096),
 * {@code --iodepth} I/Os in flight (1..256; {@code --depth}, the old spelling, is a hidden alias), {@code --no-progress},
 * {@code -o/--output table|json} (json: the result as one JSON object on stdout, a failure as
 * {@code {"error": ..., "exitCode": N}} on stderr; {@code text} is the old alias of {@code table}).
 */
public final class CopyOptions {
    @Option(names = "--chunk", paramLabel = "BYTES", defaultValue = "1048576",
            description = "Bytes per I/O (default: ${DEFAULT-VALUE}).")
    int chunkBytes;

    @Option(names = "--iodepth", paramLabel = "N", defaultValue = "8",
            description = "I/Os in flight, 1..256 (default: ${DEFAULT-VALUE}).")
    int depth;

    /** {@code --depth}: the old spelling of {@code --iodepth}, kept for scripts. */
    @Option(names = "--depth", paramLabel = "N", hidden = true)
    Integer depthAlias;

    @Option(names = "--no-progress", description = "Do not draw the progress bar.")
    boolean noProgress;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
            description = "table (summary on stderr) or json (result object on stdout) (default: ${DEFAULT-VALUE}).")
    String output;

    boolean json() {
        return TableOrJson.json(output);
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

    /** Prints the bounds and returns false when --chunk or --iodepth is out of them. */
    boolean valid(String command, PrintStream err) {
        if (!TableOrJson.valid(output)) {
            err.println(command + ": " + TableOrJson.invalid(output));
            return false;
        }
        if (depthAlias != null) {
            depth = depthAlias;
        }
        if (chunkBytes < 4096 || chunkBytes % 4096 != 0 || depth < 1 || depth > 256) {
            err.println(command + ": invalid --chunk/--iodepth: chunk=" + chunkBytes + " (multiple of 4096), iodepth="
                    + depth + " (1..256)");
            return false;
        }
        return true;
    }
}
