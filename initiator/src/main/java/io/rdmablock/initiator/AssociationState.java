package io.rdmablock.initiator;

/**
 * State of an {@link NvmeBlockDevice}'s controller association with its target, as {@link NvmeBlockDevice#state()}
 * reports it (read-only; for monitoring, diagnostics and tests). Transitions: {@code LIVE -> RECONNECTING} when the
 * association is lost, {@code RECONNECTING -> LIVE} when a new association is connected, {@code RECONNECTING ->
 * LOST} once {@link DeviceOptions#ctrlLossTimeoutMs()} has passed or a reconnect cannot succeed (rejected with DNR=1,
 * or another target identity behind the address: see {@link BlockDevice#lossReason()}), and any state
 * {@code -> CLOSED} on {@link NvmeBlockDevice#close()}. {@code LOST} and {@code CLOSED} are final.
 */
public enum AssociationState {
    /** Connected: I/O is sent to the target. */
    LIVE,
    /**
     * The association was lost and a new one is being connected (an attempt every
     * {@link DeviceOptions#reconnectDelayMs()}); outstanding I/O waits and is resubmitted once it is live.
     */
    RECONNECTING,
    /** Reconnecting gave up: every outstanding and later I/O fails with {@link DeviceLostException}. */
    LOST,
    /** The device was closed. */
    CLOSED
}
