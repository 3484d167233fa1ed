package io.rdmablock.rdma.verbs.emu;

import io.rdmablock.rdma.verbs.QpInitAttr;

/**
 * The checks and copies of queue-pair creation attributes that both emulated providers ({@code SoftQp},
 * {@code MemQp}) make, with their limits and messages. Shared implementation of the emulated providers, not an API
 * for users. Creation path only; static methods.
 */
public final class EmuQpAttrs {
    private EmuQpAttrs() {
    }

    /**
     * Checks the limits of {@code a} (in this order: work requests, SGEs, inline data, depths, retry counts) and that
     * its PD is one of {@code device}; returns the PD. The caller checks the CQs, which are of its own type.
     */
    public static EmuPd checkAndPd(QpInitAttr a, EmuDevice device) {
        check("maxSendWr", a.maxSendWr, 1, 16384);
        check("maxRecvWr", a.maxRecvWr, 1, 16384);
        check("maxSendSge", a.maxSendSge, 1, 30);
        check("maxRecvSge", a.maxRecvSge, 1, 30);
        check("maxInlineData", a.maxInlineData, 0, 256);
        check("initiatorDepth", a.initiatorDepth, 1, 16);
        check("responderResources", a.responderResources, 1, 16);
        check("retryCount", a.retryCount, 0, 7);
        check("rnrRetryCount", a.rnrRetryCount, 0, 7);
        if (!(a.pd instanceof EmuPd p) || p.device() != device) {
            throw new IllegalArgumentException("invalid pd: not a protection domain of " + device.name());
        }
        return p;
    }

    /** The least power of two that is at least {@code n} (1 for {@code n <= 1}): a queue's ring size. */
    public static int pow2(int n) {
        return n <= 1 ? 1 : Integer.highestOneBit(n - 1) << 1;
    }

    private static void check(String name, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("invalid " + name + ": " + name + "=" + v + ", min=" + min
                    + ", max=" + max);
        }
    }
}
