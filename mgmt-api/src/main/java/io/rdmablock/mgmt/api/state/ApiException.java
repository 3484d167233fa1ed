package io.rdmablock.mgmt.api.state;

import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.ProblemTypes;

/** An error answer to give: the router turns it into {@code application/problem+json}. */
public final class ApiException extends RuntimeException {
    private final transient Problem problem;
    private String wwwAuthenticate;

    public ApiException(int status, String type, String title, String detail) {
        this(Problem.of(type, title, status, detail));
    }

    /** An answer with extension members ({@link Problem#needed()}, {@link Problem#epoch()}, ...). */
    public ApiException(Problem problem) {
        super(problem.detail(), null, false, false);
        this.problem = problem;
    }

    /** Sets the {@code WWW-Authenticate} header of the answer (RFC 6750; a 401 needs one). */
    public ApiException withWwwAuthenticate(String value) {
        this.wwwAuthenticate = value;
        return this;
    }

    /** @return the {@code WWW-Authenticate} header to answer with, or null */
    public String wwwAuthenticate() {
        return wwwAuthenticate;
    }

    /** @return the problem to answer (without instance; the router adds the path) */
    public Problem problem() {
        return problem;
    }

    public static ApiException validation(String detail) {
        return new ApiException(400, ProblemTypes.VALIDATION, "Invalid request", detail);
    }

    public static ApiException volumeNotFound(String name) {
        return new ApiException(404, ProblemTypes.VOLUME_NOT_FOUND, "Volume not found", "no volume named " + name);
    }

    public static ApiException nodeNotFound(String nodeId) {
        return new ApiException(404, ProblemTypes.NODE_NOT_FOUND, "Node not found",
                "no node with nodeId " + nodeId + " (register with POST /v1/nodes)");
    }

    public static ApiException noCapacity(String detail) {
        return new ApiException(409, ProblemTypes.NO_CAPACITY, "No capacity", detail);
    }

    /**
     * Runs a check of the shared {@code Limits} (or any validation throwing {@link IllegalArgumentException}).
     *
     * @throws ApiException 400 {@code validation} with the check's message
     */
    public static void check(Runnable validation) {
        try {
            validation.run();
        } catch (IllegalArgumentException e) {
            throw validation(e.getMessage());
        }
    }
}
