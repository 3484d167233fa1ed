package io.rdmablock.rdma.verbs.ffm;

import io.rdmablock.rdma.verbs.QpInitAttr;

/** Validation of {@link QpInitAttr} against a device's limits ({@code ibv_query_device}). */
final class QpAttrs {
    private static final int MAX_WR = 16384;

    private QpAttrs() {
    }

    /** @throws IllegalArgumentException naming the field and its bounds */
    static void validate(QpInitAttr attr, FfmDeviceContext dev) {
        int maxWr = Math.min(MAX_WR, dev.maxQpWr);
        check("maxSendWr", attr.maxSendWr, 1, maxWr);
        check("maxRecvWr", attr.maxRecvWr, 1, maxWr);
        check("maxSendSge", attr.maxSendSge, 1, Math.min(30, dev.maxSge));
        check("maxRecvSge", attr.maxRecvSge, 1, Math.min(30, dev.maxSge));
        check("maxInlineData", attr.maxInlineData, 0, 256);
        check("initiatorDepth", attr.initiatorDepth, 1, 16);
        check("responderResources", attr.responderResources, 1, 16);
        check("retryCount", attr.retryCount, 0, 7);
        check("rnrRetryCount", attr.rnrRetryCount, 0, 7);
    }

    static void check(String field, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException("invalid " + field + ": " + field + "=" + value + ", min=" + min
                    + ", max=" + max);
        }
    }
}
