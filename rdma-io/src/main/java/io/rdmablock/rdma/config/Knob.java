package io.rdmablock.rdma.config;

import java.util.Objects;

/**
 * One {@code -D} system-property knob of a configuration home (the node's {@code NodeConfiguration}, the initiator's
 * {@code InitiatorConfiguration}, the provider's {@code ProviderConfiguration}): its name, default, bounds, unit and
 * description, in one place. The home reads the knob through it ({@link #number(Knobs)}, {@link #flag(Knobs)},
 * {@link #text(Knobs)}) and the configuration reference (docs/configuration.md) is generated from the same
 * descriptors, so the documented bounds are the checked ones.
 *
 * @param name         the system property, e.g. {@code rdmablock.node.storeWaitMin}
 * @param defaultText  the default as documented, e.g. {@code 8}, {@code auto}, {@code none}
 * @param boundsText   the bounds as documented, e.g. {@code 1..2147483647}, {@code true, false}
 * @param unit         the unit (e.g. {@code ms}, {@code bytes}), or empty
 * @param description  what it does and who reads it (one Markdown sentence or more, no line breaks)
 * @param defaultValue the default of a number knob (0 for the others)
 * @param min          the least value of a number knob (0 for the others)
 * @param max          the largest value of a number knob (0 for the others)
 */
public record Knob(String name, String defaultText, String boundsText, String unit, String description,
                   long defaultValue, long min, long max) {
    public Knob {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(defaultText, "defaultText");
        Objects.requireNonNull(boundsText, "boundsText");
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(description, "description");
        if (description.contains("\n")) {
            throw new IllegalArgumentException("description of " + name + " has a line break");
        }
    }

    /**
     * A decimal integer knob within {@code [min, max]}.
     *
     * @throws IllegalArgumentException when {@code def} is outside {@code [min, max]}
     */
    public static Knob number(String name, long def, long min, long max, String unit, String description) {
        Knobs.check(name, def, min, max);
        return new Knob(name, Long.toString(def), min + ".." + max, unit, description, def, min, max);
    }

    /** A {@code true | false} knob. */
    public static Knob flag(String name, boolean def, String description) {
        return new Knob(name, Boolean.toString(def), "`true`, `false`", "", description, def ? 1 : 0, 0, 1);
    }

    /** A text knob: {@code format} says what it takes (e.g. the allowed words), {@code def} its default. */
    public static Knob text(String name, String def, String format, String description) {
        return new Knob(name, def, format, "", description, 0, 0, 0);
    }

    /** The same with other documented bounds (e.g. a bound given by another knob). */
    public Knob withBoundsText(String text) {
        return new Knob(name, defaultText, text, unit, description, defaultValue, min, max);
    }

    /** The same with another documented default (e.g. {@code 8589934592 (8 GiB)}). */
    public Knob withDefaultText(String text) {
        return new Knob(name, text, boundsText, unit, description, defaultValue, min, max);
    }

    /**
     * This number knob's value from {@code k}, or its default when unset.
     *
     * @throws IllegalArgumentException naming the property, its value and its bounds when it is invalid
     */
    public long number(Knobs k) {
        return k.number(name, defaultValue, min, max);
    }

    /**
     * This number knob's value with the upper bound {@code upTo} in place of {@link #max()} (a bound given by another
     * knob); its default is not lowered.
     *
     * @throws IllegalArgumentException naming the property, its value and its bounds when it is invalid
     */
    public long number(Knobs k, long upTo) {
        return k.number(name, defaultValue, min, upTo);
    }

    /**
     * This flag knob's value from {@code k}, or its default when unset.
     *
     * @throws IllegalArgumentException when it is neither {@code true} nor {@code false}
     */
    public boolean flag(Knobs k) {
        return k.bool(name, defaultValue != 0);
    }

    /** This text knob's trimmed value, or null when unset or blank. */
    public String text(Knobs k) {
        return k.text(name);
    }
}
