package io.rdmablock.tools.copy;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.tools.device.ConnectOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code rdmablock import --volume NAME --file IMG}: copies a raw image file into a volume (offset 0), pipelined
 * ({@code --chunk} bytes x {@code --iodepth} I/Os in flight), then FLUSHes so the data is durable when it returns.
 * A file whose size is not a multiple of the LBA size is zero-padded to the next LBA boundary (the volume's bytes
 * there are overwritten; a one-line notice says so). Progress and throughput go to stderr; exit code 0 on success, 1 on failure (message on stderr), 2 on bad usage.
 */
@Command(name = "import", mixinStandardHelpOptions = true,
        description = {"Copy a raw image file into a volume through the initiator library (FLUSH at the end).",
                "A file whose size is not a multiple of the volume's LBA size is zero-padded to the next LBA: the "
                        + "volume bytes after the end of the file up to that LBA boundary are overwritten with zeroes "
                        + "(a notice is printed when this happens)."})
public final class ImportCommand implements Callable<Integer> {
    @Mixin
    ConnectOptions connect = new ConnectOptions();

    @Option(names = "--file", required = true, paramLabel = "IMG", description = "Raw image file to read.")
    Path file;

    @Mixin
    CopyOptions copy = new CopyOptions();

    PrintStream err = System.err;

    /**
     * Sends this command's messages (notices, the progress line, the summary and errors, each prefixed
     * {@code import: }) to {@code err} instead of {@link System#err}; for embedding the command and for tests.
     * Picocli's own usage and parameter errors still go to {@link picocli.CommandLine#getErr()}.
     *
     * @return this command
     */
    public ImportCommand err(PrintStream err) {
        this.err = java.util.Objects.requireNonNull(err, "err");
        return this;
    }

    @Override
    public Integer call() {
        if (!copy.valid("import", err)) {
            return 2;
        }
        if (!Files.isRegularFile(file)) {
            err.println("import: " + file + ": " + (Files.isDirectory(file) ? "is a directory, not an image file"
                    : Files.exists(file) ? "not a regular file" : "no such file"));
            return 1;
        }
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ);
             BlockDevice dev = connect.open()) {
            long size = in.size();
            int lba = dev.lbaSize();
            if (size % lba != 0) {
                long end = (size + lba - 1) / lba * lba;
                err.println("import: notice: file size " + size + " is not a multiple of the LBA size " + lba
                        + "; volume bytes " + size + ".." + (end - 1) + " are overwritten with zeroes");
            }
            Progress p = new Progress(err, size, !copy.noProgress);
            long t0 = System.nanoTime();
            ImageCopy.importImage(dev, in, size, copy.chunkBytes, copy.depth, p);
            double rate = p.finish(size);
            err.println(String.format(Locale.ROOT, "import: %s into %s in %.2f s (%s/s), flushed", Progress.bytes(size),
                    connect.describe(), (System.nanoTime() - t0) / 1e9, Progress.bytes((long) rate)));
            copy.result(java.util.Map.of("command", "import", "file", file.toString(), "target", connect.describe(),
                    "bytes", size, "seconds", (System.nanoTime() - t0) / 1e9, "bytesPerSecond", rate, "flushed", true));
            return 0;
        } catch (Exception e) {
            err.println();
            copy.failure(err, "import", message(e), 1);
            return 1;
        }
    }

    /**
     * The message to show for a failure: the innermost useful message; file-system errors name the path and the
     * reason ({@code /x/y: no such file or directory}), since their own message is often only the path.
     */
    static String message(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && (t.getMessage() == null || t instanceof java.util.concurrent.CompletionException)) {
            t = t.getCause();
        }
        if (t instanceof FileSystemException f) {
            String reason = switch (f) {
                case NoSuchFileException x -> "no such file or directory";
                case AccessDeniedException x -> "permission denied";
                case FileAlreadyExistsException x -> "file exists";
                case NotDirectoryException x -> "not a directory";
                case DirectoryNotEmptyException x -> "directory not empty";
                default -> f.getReason() != null ? f.getReason() : f.getClass().getSimpleName();
            };
            String path = f.getFile() != null ? f.getFile() : "";
            String other = f.getOtherFile() != null ? " -> " + f.getOtherFile() : "";
            return path + other + ": " + reason;
        }
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }
}
