package io.rdmablock.node.replication;

import io.rdmablock.rdma.fabric.NvmeStatus;

/**
 * What a secondary's answer to one forwarded command means for the write (docs/failover.md "Old primary",
 * docs/replication.md): the one classification {@link ReplicatedWrites} acts on.
 */
enum ForwardAnswer {
    /** Success: the copy holds the command. */
    DONE,
    /**
     * Reservation Conflict to an epoch below the set's current one, the copy still a target: the secondary already
     * accepted the epoch of a later change of the in-sync set by this same primary; the command is sent again under
     * the current epoch.
     */
    RESEND_UNDER_CURRENT_EPOCH,
    /**
     * Reservation Conflict to the current epoch (or above): the secondary accepted an epoch this primary does not
     * know. Neither resent nor acknowledged until the record is read.
     */
    FENCED,
    /**
     * Asymmetric Access Transition from a target copy, fewer than {@link ReplicatedWrites#MAX_TRANSITION_RESENDS}
     * times for this command: its queue is re-opening its volume I/O after a change of its role; sent again.
     */
    RESEND_AFTER_TRANSITION,
    /** Anything else: an error status, no answer in time, or the connection lost: the copy failed the command. */
    FAILED;

    /**
     * @param status      the secondary's NVMe status (0 = success), or {@link ForwardQueue#TIMED_OUT} /
     *                    {@link ForwardQueue#PATH_LOST}
     * @param sentUnder   the epoch the send this answers carried
     * @param epoch       the set's current epoch
     * @param target      the copy is still one writes go to
     * @param transitions resends after ANA Transition this command had already
     */
    static ForwardAnswer of(int status, long sentUnder, long epoch, boolean target, int transitions) {
        if (status == 0) {
            return DONE;
        }
        if (isReservationConflict(status)) {
            if (sentUnder < epoch) {
                return target ? RESEND_UNDER_CURRENT_EPOCH : FAILED;
            }
            return FENCED;
        }
        if (isAnaTransition(status) && target && transitions < ReplicatedWrites.MAX_TRANSITION_RESENDS) {
            return RESEND_AFTER_TRANSITION;
        }
        return FAILED;
    }

    /** Asymmetric Access Transition (SCT 3h, SC 03h). */
    private static boolean isAnaTransition(int status) {
        return status > 0 && NvmeStatus.sct(status) == 3 && NvmeStatus.sc(status) == 0x03;
    }

    /** Reservation Conflict (SCT 0, SC 83h), whatever DNR says: the secondary's epoch fence. */
    private static boolean isReservationConflict(int status) {
        return status > 0 && NvmeStatus.sct(status) == NvmeStatus.SCT_GENERIC
                && NvmeStatus.sc(status) == NvmeStatus.SC_RESERVATION_CONFLICT;
    }
}
