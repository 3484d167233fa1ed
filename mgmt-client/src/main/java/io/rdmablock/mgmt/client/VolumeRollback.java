package io.rdmablock.mgmt.client;

/**
 * The rollback a volume is going through, or the last one that failed ({@link Volume#rollback()}).
 *
 * @param requestId   the request's id (a UUID)
 * @param snapshot    the snapshot whose content the volume takes
 * @param state       {@code rolling-back}: hosts are refused and the copies not yet done roll back at their
 *                    nodes' next heartbeat; {@code failed}: a copy could not (see {@code detail}); hosts are
 *                    served again. A rollback done on every copy is no longer shown
 * @param force       whether connected hosts were disconnected for it
 * @param requestedAt when it was asked for, ISO-8601 UTC
 * @param pending     the nodes whose copies have not reported it done yet
 * @param detail      why it failed; null otherwise
 */
public record VolumeRollback(String requestId, String snapshot, String state, boolean force, String requestedAt,
                             java.util.List<String> pending, String detail) {
    /** {@link #state()} while copies roll back. */
    public static final String ROLLING_BACK = "rolling-back";
    /** {@link #state()} after a copy could not roll back. */
    public static final String FAILED = "failed";

    public VolumeRollback {
        pending = pending == null ? java.util.List.of() : java.util.List.copyOf(pending);
    }
}
