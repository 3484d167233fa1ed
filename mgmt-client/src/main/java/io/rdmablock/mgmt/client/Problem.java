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
 * @param needed    extension member of {@link ProblemTypes#INSUFFICIENT_NODES}: nodes the placement needs (else null)
 * @param available extension member of {@link ProblemTypes#INSUFFICIENT_NODES}: nodes that qualified (else null)
 * @param epoch     extension member of {@link ProblemTypes#EPOCH_MISMATCH}: the volume's current epoch (else null)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(String type, String title, int status, String detail, String instance, Integer needed,
                      Integer available, Long epoch) {

    /** Media type of every error answer. */
    public static final String MEDIA_TYPE = "application/problem+json";

    /** A problem without extension members. */
    public Problem(String type, String title, int status, String detail, String instance) {
        this(type, title, status, detail, instance, null, null, null);
    }

    /** @return a problem without instance */
    public static Problem of(String type, String title, int status, String detail) {
        return new Problem(type, title, status, detail, null);
    }

    /** @return this problem with another instance, extension members kept */
    public Problem withInstance(String newInstance) {
        return new Problem(type, title, status, detail, newInstance, needed, available, epoch);
    }

    /** @return this problem with these extension members (null: absent) */
    public Problem withExtensions(Integer newNeeded, Integer newAvailable, Long newEpoch) {
        return new Problem(type, title, status, detail, instance, newNeeded, newAvailable, newEpoch);
    }

    /** @return this problem with another status, extension members kept */
    public Problem withStatus(int newStatus) {
        return new Problem(type, title, newStatus, detail, instance, needed, available, epoch);
    }

    @Override
    public String toString() {
        return status + " " + title + ": " + detail + " (" + type + ")";
    }
}
