package io.rdmablock.tools.copy;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.tools.device.ConnectOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code rdmablock export --volume NAME --file IMG [--length BYTES]}: copies a volume (or its first
 * {@code --length} bytes) into a raw image file, pipelined like {@link ImportCommand}. Exit code 0 on success, 1 on
 * failure, 2 on bad usage.
 */
@Command(name = "export", mixinStandardHelpOptions = true,
        description = "Copy a volume into a raw image file through the initiator library.")
public final class ExportCommand implements Callable<Integer> {
    @Mixin
    ConnectOptions connect = new ConnectOptions();

    @Option(names = "--file", required = true, paramLabel = "IMG", description = "Image file to write (replaced).")
    Path file;

    @Option(names = "--length", paramLabel = "BYTES", description = "Bytes to export (default: the whole volume).")
    Long lengthBytes;

    @Mixin
    CopyOptions copy = new CopyOptions();

    PrintStream err = System.err;

    /**
     * Sends this command's messages (notices, the progress line, the summary and errors, each prefixed
     * {@code export: }) to {@code err} instead of {@link System#err}; for embedding the command and for tests.
     * Picocli's own usage and parameter errors still go to {@link picocli.CommandLine#getErr()}.
     *
     * @return this command
     */
    public ExportCommand err(PrintStream err) {
        this.err = java.util.Objects.requireNonNull(err, "err");
        return this;
    }

    @Override
    public Integer call() {
        if (!copy.valid("export", err)) {
            return 2;
        }
        try (BlockDevice dev = connect.open();
             FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            long len = lengthBytes == null ? dev.capacityBytes() : lengthBytes;
            Progress p = new Progress(err, len, !copy.noProgress);
            long t0 = System.nanoTime();
            ImageCopy.exportImage(dev, out, len, copy.chunkBytes, copy.depth, p);
            double rate = p.finish(len);
            err.println(String.format(Locale.ROOT, "export: %s from %s in %.2f s (%s/s)", Progress.bytes(len),
                    connect.describe(), (System.nanoTime() - t0) / 1e9, Progress.bytes((long) rate)));
            copy.result(java.util.Map.of("command", "export", "file", file.toString(), "source", connect.describe(),
                    "bytes", len, "seconds", (System.nanoTime() - t0) / 1e9, "bytesPerSecond", rate));
            return 0;
        } catch (Exception e) {
            err.println();
            copy.failure(err, "export", ImportCommand.message(e), 1);
            return 1;
        }
    }
}
