package io.rdmablock.mgmt.client;

import java.util.Objects;

/**
 * The management server answered an error: carries its {@link Problem} (type, title, status, detail).
 * Transport failures (connection refused, timeout) are {@link MgmtUnavailableException} instead.
 */
public class MgmtException extends RuntimeException {
    private final transient Problem problem;

    /** @param problem the decoded {@code application/problem+json} answer */
    public MgmtException(Problem problem) {
        super(Objects.requireNonNull(problem, "problem").toString());
        this.problem = problem;
    }

    /** @return the problem answer */
    public Problem problem() {
        return problem;
    }

    /** @return HTTP status */
    public int status() {
        return problem.status();
    }

    /** @return the stable type URI, one of {@link ProblemTypes} */
    public String type() {
        return problem.type();
    }
}
