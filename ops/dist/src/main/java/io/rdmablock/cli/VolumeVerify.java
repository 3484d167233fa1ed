package io.rdmablock.cli;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.VerifyDifference;
import io.rdmablock.mgmt.client.VerifyReport;
import io.rdmablock.mgmt.client.VerifyState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rdmablock volume verify NAME [--snapshot SNAP] [--timeout-s S]}: starts a verify run (of the live volume,
 * or of the copies of snapshot SNAP: docs/snapshots.md, "Verify of a snapshot") (docs/resync.md, "Verify"; a run already
 * pending or running is followed instead), polls it every second, prints progress and the result. Exit codes
 * ({@link ExitCodes}): 0 when done with every copy identical, 5 ({@link ExitCodes#DIFFER}) when copies differ (the
 * differing regions are printed), 1 ({@link ExitCodes#FAILED}) when the run failed or was replaced, 6
 * ({@link ExitCodes#TIMED_OUT}) when it did not finish within {@code --timeout-s} ({@code --timeout}: the old
 * spelling, kept as a hidden alias); 2 and 3 as for every command.
 */
@Command(name = "verify", description = "Compare every in-sync copy of a volume (CRC32C per 64 KiB region); exit 0 "
        + "identical, 5 differ, 1 failed, 6 timed out (see rdmablock --help).", mixinStandardHelpOptions = true)
final class VolumeVerify extends MgmtCall {
    /** Longest --timeout-s (a day). */
    static final long MAX_TIMEOUT_S = 86_400;

    @Parameters(index = "0", paramLabel = "NAME")
    String name;

    @Option(names = "--timeout-s", paramLabel = "S", defaultValue = "3600",
            description = "Give up after S seconds, 1.." + MAX_TIMEOUT_S + " (default ${DEFAULT-VALUE}).")
    long timeoutS;

    /** {@code --timeout}: the old spelling of {@code --timeout-s}, kept for scripts. */
    @Option(names = "--timeout", paramLabel = "S", hidden = true)
    Long timeoutAlias;

    @Option(names = "--snapshot", paramLabel = "SNAP", description = "Compare the copies of this snapshot instead of "
            + "the live volume.")
    String snapshot;

    /** Poll interval, ms (tests shorten it). */
    @Option(names = "--poll-ms", hidden = true, defaultValue = "1000")
    long intervalMs;

    @Override
    public Integer call() throws InterruptedException {
        Limits.checkName("NAME", name);
        if (timeoutAlias != null) {
            timeoutS = timeoutAlias;
        }
        if (timeoutS < 1 || timeoutS > MAX_TIMEOUT_S) {
            throw Limits.invalid("--timeout-s", Long.toString(timeoutS), "min=1, max=" + MAX_TIMEOUT_S);
        }
        long deadline = System.nanoTime() + timeoutS * 1_000_000_000L;
        if (snapshot != null) {
            Limits.checkSnapshotName("--snapshot", snapshot);
        }
        VerifyReport run = client().startVerify(name, snapshot);
        if (!output.json()) {
            out().println("verify " + run.id() + " of " + name + (snapshot == null ? "" : " snapshot " + snapshot)
                    + ": " + run.state().name().toLowerCase());
            out().flush();
        }
        while (run.state() == VerifyState.PENDING || run.state() == VerifyState.RUNNING) {
            if (System.nanoTime() - deadline >= 0) {
                report(run);
                err("volume verify: --timeout-s " + timeoutS + " reached, run " + run.id() + " is "
                        + run.state().name().toLowerCase());
                return ExitCodes.TIMED_OUT;
            }
            Thread.sleep(intervalMs);
            VerifyReport next = client().verifyStatus(name);
            if (!next.id().equals(run.id())) {
                report(next);
                err("volume verify: run " + run.id() + " was replaced by " + next.id());
                return ExitCodes.FAILED;
            }
            run = next;
            if (!output.json() && run.state() == VerifyState.RUNNING) {
                long pct = run.totalBytes() <= 0 ? 0 : run.checkedBytes() * 100 / run.totalBytes();
                out().println("  " + pct + "% " + Sizes.format(run.checkedBytes()) + "/"
                        + Sizes.format(run.totalBytes()));
                out().flush();
            }
        }
        report(run);
        if (run.state() == VerifyState.FAILED) {
            return ExitCodes.FAILED;
        }
        return run.differing() > 0 ? ExitCodes.DIFFER : ExitCodes.OK;
    }

    private void report(VerifyReport run) {
        if (output.json()) {
            out().println(Json.pretty(run));
            out().flush();
            return;
        }
        switch (run.state()) {
            case DONE -> {
                if (run.differing() == 0) {
                    out().println("identical: " + String.join(", ", run.nodeIds()) + " (" + Sizes.format(
                            run.checkedBytes()) + " compared)");
                } else {
                    out().println("copies differ in " + run.differing() + " region(s)"
                            + (run.differing() > run.differences().size() ? " (first " + run.differences().size()
                            + " listed)" : "") + ":");
                    var table = new Table("OFFSET", "LENGTH", "DIFFERING-NODES");
                    for (VerifyDifference d : run.differences()) {
                        table.row(d.offsetBytes(), d.lengthBytes(), String.join(",", d.nodeIds()));
                    }
                    table.print(out());
                }
            }
            case FAILED -> out().println("failed: " + (run.error() == null ? "(no reason given)" : run.error()));
            default -> out().println(run.state().name().toLowerCase() + ": " + Sizes.format(run.checkedBytes()) + "/"
                    + Sizes.format(run.totalBytes()) + " compared");
        }
        out().flush();
    }

    private void err(String message) {
        spec.commandLine().getErr().println(message);
        spec.commandLine().getErr().flush();
    }
}
