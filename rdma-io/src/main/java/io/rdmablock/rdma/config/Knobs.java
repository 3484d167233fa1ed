package io.rdmablock.rdma.config;

import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

/**
 * Reads {@code -D} system-property knobs for a process's configuration home (the node's {@code NodeConfiguration},
 * the initiator's {@code InitiatorConfiguration}, the provider's {@code ProviderConfiguration}), naming the one that is
 * invalid. An unset or blank property takes its default; numbers are decimal integers (no suffixes); booleans are
 * {@code true} or {@code false} in any case. Every error is an {@link IllegalArgumentException} naming the property,
 * its value and its bounds, e.g. {@code invalid rdmablock.node.storeWaitMin: value=0, min=1, max=2147483647}.
 *
 * @param properties a property's name to its value, null when unset ({@code System::getProperty}, a map's
 *                   {@code get} in tests)
 */
public record Knobs(Function<String, String> properties) {
    public Knobs {
        Objects.requireNonNull(properties, "properties");
    }

    /** Knobs of this JVM's system properties. */
    public static Knobs system() {
        return new Knobs(System::getProperty);
    }

    /** The trimmed value, or null when unset or blank. */
    public String text(String name) {
        String v = properties.apply(name);
        return v == null || v.isBlank() ? null : v.trim();
    }

    /**
     * A decimal integer within {@code [min, max]}, or {@code def} when unset.
     *
     * @throws IllegalArgumentException when it is not a number or out of bounds
     */
    public long number(String name, long def, long min, long max) {
        String v = text(name);
        if (v == null) {
            return def;
        }
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + name + ": value=" + v + " (not a number), min=" + min
                    + ", max=" + max);
        }
        check(name, n, min, max);
        return n;
    }

    /**
     * {@code true} or {@code false} (any case), or {@code def} when unset.
     *
     * @throws IllegalArgumentException for any other word
     */
    public boolean bool(String name, boolean def) {
        String v = text(name);
        if (v == null) {
            return def;
        }
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("invalid " + name + ": value=" + v + ", allowed=true|false");
        };
    }

    /**
     * @throws IllegalArgumentException naming {@code property}, {@code v} and the bounds when {@code v} is outside
     *                                  {@code [min, max]}
     */
    public static void check(String property, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("invalid " + property + ": value=" + v + ", min=" + min + ", max="
                    + max);
        }
    }
}
