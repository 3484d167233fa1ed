package io.rdmablock.tools.copy;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.NvmeStatusException;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotState;
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
 * {@code rdmablock export --volume NAME --file IMG [--length BYTES] [--snapshot SNAP | --snapshot-id N]}: copies a
 * volume (or its first {@code --length} bytes) into a raw image file, pipelined like {@link ImportCommand}. With
 * {@code --snapshot} it copies that snapshot's image instead (what the volume held at the cut, while the volume keeps
 * taking writes): the name is looked up on the management server ({@code GET /v1/volumes/{name}/snapshots/{snap}}:
 * its id and size; it must be {@code ready}), and the blocks are read with rdmablock's Read Snapshot command from
 * the volume's primary (docs/snapshots.md, "Export"). {@code --snapshot-id} skips the lookup (a host credential
 * cannot read snapshots; also with {@code --address}/{@code --subnqn}); the length is then the volume's unless
 * {@code --length} says. Exit code 0 on success, 1 on failure (an unknown or unready snapshot, a snapshot the node
 * does not hold or deleted meanwhile, a lost connection: the message says which), 2 on bad usage (also
 * {@code --snapshot} with {@code --address}, both snapshot options, an id below 1).
 */
@Command(name = "export", mixinStandardHelpOptions = true,
        description = "Copy a volume, or one of its snapshots, into a raw image file through the initiator library.")
public final class ExportCommand implements Callable<Integer> {
    @Mixin
    ConnectOptions connect = new ConnectOptions();

    @Option(names = "--file", required = true, paramLabel = "IMG", description = "Image file to write (replaced).")
    Path file;

    @Option(names = "--length", paramLabel = "BYTES", description = "Bytes to export (default: the whole volume, or "
            + "the whole snapshot).")
    Long lengthBytes;

    @Option(names = "--snapshot", paramLabel = "SNAP", description = "Export this snapshot of the volume (looked up "
            + "on the management server) instead of the volume.")
    String snapshot;

    @Option(names = "--snapshot-id", paramLabel = "N", description = "Export the snapshot of this id (as `rdmablock "
            + "snapshot get` shows it), without looking it up.")
    Long snapshotId;

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
        if (snapshot != null && snapshotId != null || snapshotId != null && snapshotId < 1) {
            err.println("export: " + (snapshotId != null && snapshotId < 1 ? "invalid --snapshot-id: " + snapshotId
                    + ", min=1" : "give --snapshot or --snapshot-id, not both"));
            return 2;
        }
        long snapId = snapshotId == null ? 0 : snapshotId;
        Long len0 = lengthBytes;
        String what;
        try {
            if (snapshot != null) {
                Snapshot s = connect.snapshot(snapshot);
                if (s.state() != SnapshotState.READY) {
                    throw new IllegalStateException("snapshot " + snapshot + " of volume " + s.volume() + " is "
                            + s.state().toString().toLowerCase(Locale.ROOT) + ", not ready");
                }
                snapId = s.id();
                len0 = lengthBytes != null ? lengthBytes : Long.valueOf(s.sizeBytes());
            }
            what = snapId == 0 ? connect.describe() : "snapshot " + (snapshot != null ? snapshot : "id " + snapId)
                    + " of " + connect.describe();
        } catch (IllegalArgumentException e) { // --snapshot without the management server, a bad name
            copy.failure(err, "export", ImportCommand.message(e), 2);
            return 2;
        } catch (RuntimeException e) {
            copy.failure(err, "export", lookupMessage(e), 1);
            return 1;
        }
        try (BlockDevice dev = connect.open();
             FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            long len = len0 == null ? dev.capacityBytes() : len0;
            Progress p = new Progress(err, len, !copy.noProgress);
            long t0 = System.nanoTime();
            ImageCopy.exportImage(dev, out, len, copy.chunkBytes, copy.depth, p, snapId);
            double rate = p.finish(len);
            err.println(String.format(Locale.ROOT, "export: %s from %s in %.2f s (%s/s)", Progress.bytes(len),
                    what, (System.nanoTime() - t0) / 1e9, Progress.bytes((long) rate)));
            java.util.Map<String, Object> result = new java.util.LinkedHashMap<>(java.util.Map.of("command", "export",
                    "file", file.toString(), "source", connect.describe(), "bytes", len,
                    "seconds", (System.nanoTime() - t0) / 1e9, "bytesPerSecond", rate));
            if (snapId != 0) {
                result.put("snapshotId", snapId);
            }
            copy.result(result);
            return 0;
        } catch (Exception e) {
            err.println();
            copy.failure(err, "export", snapId != 0 ? snapshotMessage(e, what, snapId) : ImportCommand.message(e), 1);
            return 1;
        }
    }

    private String lookupMessage(RuntimeException e) {
        if (e instanceof MgmtException m && m.status() == 404) {
            return "no snapshot " + snapshot + " of volume " + connect.displayName() + " (" + m.getMessage() + ")";
        }
        return ImportCommand.message(e);
    }

    /** A failed read of a snapshot: Invalid Field means the node holds no snapshot of that id. */
    static String snapshotMessage(Throwable e, String what, long snapId) {
        Throwable t = e;
        for (int i = 0; i < 8 && t != null && !(t instanceof NvmeStatusException); i++) {
            t = t.getCause();
        }
        if (t instanceof NvmeStatusException n && n.sct() == 0 && n.sc() == 0x02) {
            return what + ": the volume's primary holds no snapshot of id " + snapId
                    + " (deleted, not taken there, or a node without Read Snapshot): " + n.getMessage();
        }
        return what + ": " + ImportCommand.message(e);
    }
}
