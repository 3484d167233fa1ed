package io.rdmablock.cli;

import java.util.List;

/**
 * Exit codes of every {@code rdmablock} command: one table ({@link #TABLE}), shown in the footer of
 * {@code rdmablock --help} and in docs/cli.md ("Exit codes"). The tools' commands (bench, replay, nbd, import, export)
 * return the same numbers. Each outcome has its own code: {@code volume verify} no longer reuses 1 and 2.
 */
public final class ExitCodes {
    /** Success. */
    public static final int OK = 0;
    /**
     * The command failed: the management server answered an error other than bad input (404, 409, 503...), an I/O
     * or verification error (bench, replay, import, export), a volume verify run that failed, a lost NBD device.
     */
    public static final int FAILED = 1;
    /** Bad input: an option out of bounds (checked locally or answered 400 by the server), or a usage error. */
    public static final int BAD_INPUT = 2;
    /** The management server could not be reached. */
    public static final int UNAVAILABLE = 3;
    /**
     * {@code rdmablock status} only: the cluster answered but is degraded (no leader known, metadata store
     * unreachable, a node down, a volume degraded or unavailable, a copy not in sync); see {@link StatusCommand}.
     */
    public static final int DEGRADED = 4;
    /** {@code volume verify}: the copies of the volume differ (the differing regions are printed). */
    public static final int DIFFER = 5;
    /** {@code volume verify}: the run did not finish within {@code --timeout-s}. */
    public static final int TIMED_OUT = 6;

    /** One row of the table. */
    public record Code(int code, String meaning) {
    }

    /** The table, in code order; each meaning fits one 80-column help line. */
    public static final List<Code> TABLE = List.of(
            new Code(OK, "success"),
            new Code(FAILED, "failed: server error (not found, conflict...), I/O or verification error"),
            new Code(BAD_INPUT, "bad input: usage error, option out of bounds (locally or answered 400)"),
            new Code(UNAVAILABLE, "the management server could not be reached"),
            new Code(DEGRADED, "status: the cluster is degraded"),
            new Code(DIFFER, "volume verify: the copies differ"),
            new Code(TIMED_OUT, "volume verify: not finished within --timeout-s"));

    private ExitCodes() {
    }

    /** @return the table as help footer lines ({@code "  N  meaning"}) */
    static String[] footer() {
        return TABLE.stream().map(c -> String.format("  %d  %s", c.code(), c.meaning())).toArray(String[]::new);
    }
}
