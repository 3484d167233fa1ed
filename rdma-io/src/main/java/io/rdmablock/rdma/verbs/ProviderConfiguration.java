package io.rdmablock.rdma.verbs;

import io.rdmablock.rdma.config.Knob;
import io.rdmablock.rdma.config.Knobs;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;

/**
 * The verbs provider's knobs, in one place (the provider's configuration home; docs/configuration.md): which provider
 * to use and the {@code soft} provider's timing. Read and checked once per JVM, the first time a provider is selected
 * or a soft queue pair is created ({@link #current()}); a bad value fails that first use with an
 * {@link IllegalArgumentException} naming the property, its value and its bounds. Nothing is re-read later.
 *
 * @param provider          {@link #PROVIDER}: {@code auto}, {@code soft}, {@code ffm} or {@code memory}
 * @param softAckDelayNs    {@link #SOFT_ACK_DELAY_NS}
 * @param softInlineGraceNs {@link #SOFT_INLINE_GRACE_NS}
 * @param softRepollNs      {@link #SOFT_REPOLL_NS}
 */
public record ProviderConfiguration(String provider, long softAckDelayNs, long softInlineGraceNs,
                                    long softRepollNs) {
    /**
     * The provider: {@code auto} (ffm when libibverbs lists a device, else soft), {@code soft}, {@code ffm} or
     * {@code memory} (docs/providers.md "Choosing the RDMA provider"). System property, else the environment variable
     * {@link #PROVIDER_ENV}, else {@code auto}. A command's {@code --provider} option sets the property.
     */
    public static final String PROVIDER = "rdma.provider";
    /** Environment variable read when {@link #PROVIDER} is unset. */
    public static final String PROVIDER_ENV = "RDMABLOCK_RDMA_PROVIDER";
    /**
     * Soft provider: how long an ACK with nothing to ride with may be held back, ns, default 100000 (100 us),
     * 0..10000000; 0 sends it at once. The requester's send completion waits that long at most.
     */
    public static final String SOFT_ACK_DELAY_NS = "rdmablock.soft.ackDelayNs";
    /**
     * Soft provider: how long after a caller last stepped or waited on a queue pair's engine the engine's own thread
     * stays asleep, ns, default 1000000 (1 ms), 0..1000000000; the longest a peer's request waits when the
     * application stops polling all at once. 0 turns caller-driven progress off (every step on the engine's thread).
     */
    public static final String SOFT_INLINE_GRACE_NS = "rdmablock.soft.inlineGraceNs";
    /**
     * Soft provider: after a poll's step found nothing, the next polls within this long skip the socket, ns, default
     * 5000 (5 us), 0..1000000: a spinning poller costs a system call per interval, not per round.
     */
    public static final String SOFT_REPOLL_NS = "rdmablock.soft.repollNs";

    private static final Set<String> PROVIDERS = Set.of("auto", "soft", "ffm", "memory");

    /** {@link #PROVIDER} (the environment variable {@link #PROVIDER_ENV} is read when it is unset). */
    public static final Knob PROVIDER_KNOB = Knob.text(PROVIDER, "`auto`", "`auto`, `soft`, `ffm`, `memory`",
            "Which verbs provider ([providers.md](providers.md#choosing-the-rdma-provider)); env `" + PROVIDER_ENV + "` when the "
                    + "property is unset; a command's `--provider` sets the property. Read at each selection.");
    private static final Knob K_ACK_DELAY = Knob.number(SOFT_ACK_DELAY_NS, 100_000L, 0, 10_000_000L, "ns",
            "Soft provider: how long an ACK with nothing to ride with may be held back (0: at once); the "
                    + "requester's send completion waits that long at most.");
    private static final Knob K_INLINE_GRACE = Knob.number(SOFT_INLINE_GRACE_NS, 1_000_000L, 0, 1_000_000_000L, "ns",
            "Soft provider: how long after the application last polled or waited on a queue pair its engine's own "
                    + "thread stays asleep; 0: every engine step on its own thread.");
    private static final Knob K_REPOLL = Knob.number(SOFT_REPOLL_NS, 5_000L, 0, 1_000_000L, "ns", "Soft provider: "
            + "after a poll found nothing, polls within this long skip the socket (a system call per interval, not "
            + "per round).");
    /** Every knob of the provider, as docs/configuration.md lists them. */
    public static final List<Knob> KNOBS = List.of(PROVIDER_KNOB, K_ACK_DELAY, K_INLINE_GRACE, K_REPOLL);

    /** The defaults: {@code auto}, 100 us, 1 ms, 5 us. */
    public static final ProviderConfiguration DEFAULTS = new ProviderConfiguration("auto", K_ACK_DELAY.defaultValue(),
            K_INLINE_GRACE.defaultValue(), K_REPOLL.defaultValue());

    public ProviderConfiguration {
        provider = provider == null ? "auto" : provider.trim().toLowerCase(Locale.ROOT);
        if (!PROVIDERS.contains(provider)) {
            throw new IllegalArgumentException("invalid " + PROVIDER + ": '" + provider
                    + "' (valid: auto, soft, ffm, memory)");
        }
        Knobs.check(SOFT_ACK_DELAY_NS, softAckDelayNs, K_ACK_DELAY.min(), K_ACK_DELAY.max());
        Knobs.check(SOFT_INLINE_GRACE_NS, softInlineGraceNs, K_INLINE_GRACE.min(), K_INLINE_GRACE.max());
        Knobs.check(SOFT_REPOLL_NS, softRepollNs, K_REPOLL.min(), K_REPOLL.max());
    }

    /**
     * The knobs from {@code properties} and, for the provider only, {@code env}.
     *
     * @throws IllegalArgumentException naming the property, its value and its bounds when one is invalid
     */
    public static ProviderConfiguration from(Function<String, String> properties, Function<String, String> env) {
        Knobs k = new Knobs(properties);
        String provider = PROVIDER_KNOB.text(k);
        if (provider == null) {
            String e = env.apply(PROVIDER_ENV);
            provider = e == null || e.isBlank() ? "auto" : e;
        }
        return new ProviderConfiguration(provider,
                K_ACK_DELAY.number(k), K_INLINE_GRACE.number(k), K_REPOLL.number(k));
    }

    /** This JVM's system properties and environment. */
    public static ProviderConfiguration fromSystem() {
        return from(System::getProperty, System::getenv);
    }

    /**
     * The soft provider's timing of this JVM, read once (the first call; the system properties and environment as
     * they are then). The provider's name is not cached: {@link Providers#configuredMode()} reads it at each
     * selection, since a command's {@code --provider} sets the property after start.
     */
    public static ProviderConfiguration current() {
        return Holder.CURRENT;
    }

    private static final class Holder {
        static final ProviderConfiguration CURRENT = fromSystem();
    }
}
