package io.rdmablock.cli;

/**
 * Exit codes of every {@code rdmablock} command: 0 success, 1 failed, 2 bad input, 3 management server unreachable,
 * 4 cluster degraded ({@code rdmablock status}). A few commands give 1 and 2 a meaning of their own, said in their
 * {@code --help} ({@code volume verify}).
 */
public final class ExitCodes {
    /** Success. */
    public static final int OK = 0;
    /** The management server answered an error other than bad input (404, 409, 503...), or a command failed. */
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

    private ExitCodes() {
    }
}
