package io.rdmablock.cli;

/** Exit codes of every {@code rdmablock} command. */
public final class ExitCodes {
    /** Success. */
    public static final int OK = 0;
    /** The management server answered an error other than bad input (404, 409, 503...), or a command failed. */
    public static final int FAILED = 1;
    /** Bad input: an option out of bounds (checked locally or answered 400 by the server), or a usage error. */
    public static final int BAD_INPUT = 2;
    /** The management server could not be reached. */
    public static final int UNAVAILABLE = 3;

    private ExitCodes() {
    }
}
