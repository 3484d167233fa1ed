package io.rdmablock.cli;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code rdmablock snapshot create|list|get|delete VOLUME [NAME]}: snapshots of volumes over the management REST
 * API ({@code /v1/volumes/{name}/snapshots}, docs/snapshots.md); a replicated volume's is taken on every copy at one
 * cut, and only while every copy is in sync (409 volume-not-ready otherwise). {@code create} and {@code delete} wait for the volume's primary (the
 * server waits at most 10 s): a snapshot the primary has not taken yet is printed {@code creating}, one it has not
 * deleted yet {@code deleting}; both exit 0 (check with {@code snapshot get}). Errors as every command: the problem's
 * title and detail, exit codes of {@link ExitCodes}.
 */
@Command(name = "snapshot", description = "Take, list, inspect and delete snapshots of single-copy volumes.",
        mixinStandardHelpOptions = true,
        subcommands = {SnapshotCommand.Create.class, SnapshotCommand.ListSnapshots.class, SnapshotCommand.Get.class,
                SnapshotCommand.Delete.class})
public final class SnapshotCommand implements Callable<Integer> {
    /**
     * Least request timeout of {@code create} and {@code delete}, ms: above the server's 10 s wait for the primary,
     * so its 202 arrives rather than a client timeout.
     */
    static final long WAITING_TIMEOUT_MS = 15_000;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.BAD_INPUT;
    }

    static void print(PrintWriter out, OutputOptions output, List<Snapshot> snapshots) {
        if (output.json()) {
            out.println(Json.pretty(snapshots));
            out.flush();
            return;
        }
        var table = new Table("VOLUME", "NAME", "ID", "STATE", "SIZE", "EXCLUSIVE", "EPOCH", "CREATED");
        for (Snapshot s : snapshots) {
            table.row(s.volume(), s.name(), s.id(), state(s.state()), Sizes.format(s.sizeBytes()),
                    Sizes.format(s.exclusiveBytes()), s.epoch(), Instant.ofEpochMilli(s.createdAtMs()).toString());
        }
        table.print(out);
    }

    /** Prints one snapshot: a one-row table, or with {@code -o json} the object. */
    static void print(PrintWriter out, OutputOptions output, Snapshot snapshot) {
        if (output.json()) {
            out.println(Json.pretty(snapshot));
            out.flush();
        } else {
            print(out, output, List.of(snapshot));
        }
    }

    static String state(SnapshotState state) {
        return state.name().toLowerCase(java.util.Locale.ROOT);
    }

    private static void checkNames(String volume, String name) {
        Limits.checkName("VOLUME", volume);
        if (name != null) {
            Limits.checkSnapshotName("NAME", name);
        }
    }

    @Command(name = "create", description = "Take a snapshot of a single-copy volume (waits up to 10 s for its "
            + "primary; a snapshot not yet taken is shown creating).", mixinStandardHelpOptions = true)
    static final class Create extends MgmtCall {
        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;
        @Parameters(index = "1", paramLabel = "NAME",
                description = "1..64 of A-Z a-z 0-9 . _ -, first a letter or digit; unique within the volume.")
        String name;

        @Override
        public Integer call() {
            checkNames(volume, name);
            Snapshot s = mgmt.client(WAITING_TIMEOUT_MS).createSnapshot(volume, name);
            print(out(), output, s);
            if (!output.json() && s.state() == SnapshotState.CREATING) {
                out().println("the primary has not taken it yet: see rdmablock snapshot get " + volume + " " + name);
                out().flush();
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "list", description = "List a volume's snapshots, oldest first.", mixinStandardHelpOptions = true)
    static final class ListSnapshots extends MgmtCall {
        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;

        @Override
        public Integer call() {
            checkNames(volume, null);
            print(out(), output, client().listSnapshots(volume));
            return ExitCodes.OK;
        }
    }

    @Command(name = "get", description = "Show one snapshot.", mixinStandardHelpOptions = true)
    static final class Get extends MgmtCall {
        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;
        @Parameters(index = "1", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            checkNames(volume, name);
            Snapshot s = client().getSnapshot(volume, name);
            if (output.json()) {
                out().println(Json.pretty(s));
                out().flush();
            } else {
                print(out(), output, s);
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "delete", description = "Delete a snapshot (waits up to 10 s for the volume's primary; one not "
            + "yet deleted there is shown deleting).", mixinStandardHelpOptions = true)
    static final class Delete extends MgmtCall {
        @Parameters(index = "0", paramLabel = "VOLUME")
        String volume;
        @Parameters(index = "1", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            checkNames(volume, name);
            Optional<Snapshot> left = mgmt.client(WAITING_TIMEOUT_MS).deleteSnapshot(volume, name);
            if (left.isPresent()) {
                print(out(), output, left.get());
                if (!output.json()) {
                    out().println("the primary has not deleted it yet: the record goes once it has");
                }
            } else if (output.json()) {
                var gone = new LinkedHashMap<String, Object>();
                gone.put("volume", volume);
                gone.put("name", name);
                gone.put("deleted", true);
                out().println(Json.pretty(gone));
            } else {
                out().println("deleted snapshot " + name + " of volume " + volume);
            }
            out().flush();
            return ExitCodes.OK;
        }
    }
}
