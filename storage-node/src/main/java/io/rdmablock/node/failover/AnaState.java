package io.rdmablock.node.failover;

/**
 * Asymmetric Namespace Access state of a namespace's ANA group as one controller reports it (NVMe 1.4 §8.20.3; the
 * ANA log page's "ANA State" field, §5.14.1.12, Figure 198). rdmablock exports every replicated volume's namespace in
 * ANA group 1 on each node holding a copy: the primary {@link #OPTIMIZED}, a secondary {@link #INACCESSIBLE}, a
 * primary still activating its epoch {@link #CHANGE}, a primary whose lease has lapsed {@link #INACCESSIBLE}
 * (docs/failover.md).
 */
public enum AnaState {
    OPTIMIZED(0x01),
    NON_OPTIMIZED(0x02),
    INACCESSIBLE(0x03),
    PERSISTENT_LOSS(0x04),
    CHANGE(0x0F);

    private final int code;

    AnaState(int code) {
        this.code = code;
    }

    /** The 4-bit code of the log page's ANA State field. */
    public int code() {
        return code;
    }
}
