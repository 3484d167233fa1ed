package io.rdmablock.initiator;

import io.rdmablock.rdma.config.Knob;
import io.rdmablock.rdma.config.Knobs;

import java.util.List;
import java.util.function.Function;

/**
 * The initiator's (and the tools' device connection's) {@code -D} knobs, in one place (docs/configuration.md): read and
 * checked once per JVM, the first time an I/O queue is created or a tool asks the management server ({@link
 * #current()}); a bad value fails that first use with an {@link IllegalArgumentException} naming the property, its
 * value and its bounds. Nothing is re-read later.
 *
 * @param spinNs       {@link #SPIN_NS}
 * @param pollBatch    {@link #POLL_BATCH}
 * @param mgmtTimeoutMs {@link #MGMT_TIMEOUT_MS}
 */
public record InitiatorConfiguration(long spinNs, int pollBatch, long mgmtTimeoutMs) {
    /**
     * How long an idle I/O queue poller keeps polling before it waits for a completion event, ns, default 0,
     * 0..100000000. 0: where host, node and disk share a few cores, the spin costs more than the wake-up (measured
     * 2-4.5 us vs 5-11 us poller CPU per 4 KiB I/O at QD32, same IOPS).
     */
    public static final String SPIN_NS = "rdmablock.initiator.spinNs";
    /**
     * Work completions an I/O queue poller takes per poll of its completion queue, default 16, 1..64 (docs/bench.md
     * "Initiator poll batch": 4K QD32 through a node on a disk, 16 vs 64, randread 50-52k vs 44-47k IOPS).
     */
    public static final String POLL_BATCH = "rdmablock.initiator.pollBatch";
    /**
     * Per-request timeout of a tool's management client (volume lookups of {@code bench}, {@code import},
     * {@code nbd} ...), ms, default 10000, 1..3600000.
     */
    public static final String MGMT_TIMEOUT_MS = "rdmablock.mgmt.timeoutMs";

    private static final Knob K_SPIN = Knob.number(SPIN_NS, 0, 0, 100_000_000L, "ns", "How long an idle I/O queue "
            + "poller polls before it waits for a completion event (docs/bench.md).");
    private static final Knob K_POLL_BATCH = Knob.number(POLL_BATCH, 16, 1, 64, "completions", "Work completions an "
            + "I/O queue poller takes per poll (docs/bench.md \"Initiator poll batch\").");
    private static final Knob K_MGMT_TIMEOUT = Knob.number(MGMT_TIMEOUT_MS, 10_000, 1, 3_600_000L, "ms",
            "Per-request timeout of a tool's management client (`bench`, `import`, `export`, `nbd` ... looking up a "
                    + "volume).");
    /** Every knob of the initiator, as docs/configuration.md lists them. */
    public static final List<Knob> KNOBS = List.of(K_SPIN, K_POLL_BATCH, K_MGMT_TIMEOUT);

    /** The defaults: 0 ns, 16, 10 s. */
    public static final InitiatorConfiguration DEFAULTS = new InitiatorConfiguration(K_SPIN.defaultValue(),
            (int) K_POLL_BATCH.defaultValue(), K_MGMT_TIMEOUT.defaultValue());

    public InitiatorConfiguration {
        Knobs.check(SPIN_NS, spinNs, K_SPIN.min(), K_SPIN.max());
        Knobs.check(POLL_BATCH, pollBatch, K_POLL_BATCH.min(), K_POLL_BATCH.max());
        Knobs.check(MGMT_TIMEOUT_MS, mgmtTimeoutMs, K_MGMT_TIMEOUT.min(), K_MGMT_TIMEOUT.max());
    }

    /**
     * The knobs from {@code properties} (a property's name to its value, null when unset), each checked.
     *
     * @throws IllegalArgumentException naming the property, its value and its bounds when one is invalid
     */
    public static InitiatorConfiguration from(Function<String, String> properties) {
        Knobs k = new Knobs(properties);
        return new InitiatorConfiguration(K_SPIN.number(k), (int) K_POLL_BATCH.number(k), K_MGMT_TIMEOUT.number(k));
    }

    /** This JVM's knobs, read once (the first call; the system properties as they are then). */
    public static InitiatorConfiguration current() {
        return Holder.CURRENT;
    }

    private static final class Holder {
        static final InitiatorConfiguration CURRENT = from(System::getProperty);
    }
}
