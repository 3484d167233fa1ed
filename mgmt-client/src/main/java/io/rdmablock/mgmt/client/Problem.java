package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * An {@code application/problem+json} error answer (RFC 9457 section 3).
 *
 * @param type     stable URI naming the kind of error, one of {@link ProblemTypes}
 * @param title    short human summary of the type (same for every instance of a type)
 * @param status   HTTP status code
 * @param detail   what went wrong with this request, naming the field and its bounds
 * @param instance request path that failed (may be null)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(String type, String title, int status, String detail, String instance) {

    /** Media type of every error answer. */
    public static final String MEDIA_TYPE = "application/problem+json";

    /** @return a problem without instance */
    public static Problem of(String type, String title, int status, String detail) {
        return new Problem(type, title, status, detail, null);
    }

    @Override
    public String toString() {
        return status + " " + title + ": " + detail + " (" + type + ")";
    }
}
