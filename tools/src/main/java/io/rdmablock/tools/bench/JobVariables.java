package io.rdmablock.tools.bench;

import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * fio's substitutions in option values (fio HOWTO "Environment variables" and "Reserved keywords"; fio's options.c
 * {@code fio_option_dup_subs}, {@code fio_keyword_replace}, {@code bc_calc}), applied to every {@code key=value} of a
 * job file before the value is parsed:
 * <ul>
 * <li>{@code ${NAME}} becomes the environment variable's value; an unset variable becomes the empty string (fio's
 * meaning: the option then usually fails to parse, e.g. {@code invalid bs: '' is not a size}); the caller is told the
 * unset names so it can warn.</li>
 * <li>{@code $pagesize} (bytes of a page, 4096 unless the JVM says otherwise), {@code $mb_memory} (MiB of physical
 * memory), {@code $ncpus} (online CPUs) become their values.</li>
 * <li>When a keyword was replaced and the value holds {@code + - * /} (and no {@code '}), the value is computed as
 * {@code bc} does with scale 0: integers, {@code + - * / % ^} and parentheses, division truncating toward zero
 * ({@code size=5*1024*1024*$mb_memory/8}). A value that is no such expression fails with
 * {@link IllegalArgumentException} naming the option (fio: bc's error).</li>
 * </ul>
 */
final class JobVariables {
    /** The reserved keywords' values: page size (bytes), physical memory (MiB), online CPUs. */
    record Keywords(long pagesize, long mbMemory, long ncpus) {
        static Keywords system() {
            long mem = 0;
            if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                    instanceof com.sun.management.OperatingSystemMXBean os) {
                mem = os.getTotalMemorySize();
            }
            return new Keywords(pageSize(), mem / (1024 * 1024), Runtime.getRuntime().availableProcessors());
        }

        private static long pageSize() {
            try {
                String s = new String(new ProcessBuilder("getconf", "PAGESIZE").start().getInputStream().readAllBytes()).strip();
                return Long.parseLong(s);
            } catch (java.io.IOException | NumberFormatException e) {
                return 4096;
            }
        }
    }

    private static volatile Keywords system;

    private JobVariables() {
    }

    static Keywords systemKeywords() {
        Keywords k = system;
        if (k == null) {
            k = Keywords.system();
            system = k;
        }
        return k;
    }

    /**
     * The value of option {@code key} after fio's substitutions.
     *
     * @param unset receives the names of unset environment variables (substituted by "")
     * @throws IllegalArgumentException when a keyword's value holds math that is not an integer expression
     */
    static String expand(String key, String value, UnaryOperator<String> env, Keywords kw, Set<String> unset) {
        StringBuilder sb = new StringBuilder();
        int i = 0;
        while (i < value.length()) {
            int close = value.indexOf('}', i);
            if (value.startsWith("${", i) && close > i + 2) {
                String name = value.substring(i + 2, close);
                String v = env.apply(name);
                if (v == null) {
                    unset.add(name);
                } else {
                    sb.append(v);
                }
                i = close + 1;
            } else {
                sb.append(value.charAt(i++));
            }
        }
        String s = sb.toString();
        if (!s.contains("$pagesize") && !s.contains("$mb_memory") && !s.contains("$ncpus")) {
            return s;
        }
        s = s.replace("$pagesize", Long.toString(kw.pagesize())).replace("$mb_memory", Long.toString(kw.mbMemory()))
                .replace("$ncpus", Long.toString(kw.ncpus()));
        if (s.indexOf('\'') >= 0 || s.chars().noneMatch(c -> c == '+' || c == '-' || c == '*' || c == '/')) {
            return s;
        }
        try {
            Calc c = new Calc(s.replace(" ", ""));
            long r = c.sum();
            if (c.pos != c.s.length()) {
                throw new NumberFormatException();
            }
            return Long.toString(r);
        } catch (NumberFormatException | ArithmeticException | StringIndexOutOfBoundsException e) {
            throw new IllegalArgumentException("invalid " + key + ": '" + value + "' = '" + s + "' is not an integer"
                    + " expression (fio computes a value holding $pagesize, $mb_memory or $ncpus with bc: + - * / % ^ ( ))");
        }
    }

    /** bc with scale 0: sum of products of powers of (signed) factors. */
    private static final class Calc {
        final String s;
        int pos;

        Calc(String s) {
            this.s = s;
        }

        long sum() {
            long v = product();
            while (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) {
                char op = s.charAt(pos++);
                long r = product();
                v = op == '+' ? Math.addExact(v, r) : Math.subtractExact(v, r);
            }
            return v;
        }

        long product() {
            long v = power();
            while (pos < s.length() && "*/%".indexOf(s.charAt(pos)) >= 0) {
                char op = s.charAt(pos++);
                long r = power();
                v = op == '*' ? Math.multiplyExact(v, r) : op == '/' ? v / r : v % r;
            }
            return v;
        }

        long power() {
            long base = unary();
            if (pos < s.length() && s.charAt(pos) == '^') {
                pos++;
                long e = power(); // right-associative, as bc
                long r = 1;
                for (long k = 0; k < (Math.abs(base) > 1 ? e : base == 0 ? Math.min(e, 1) : e % 2); k++) {
                    r = Math.multiplyExact(r, base);
                }
                return r;
            }
            return base;
        }

        long unary() {
            if (s.charAt(pos) == '-') {
                pos++;
                return -unary();
            }
            if (s.charAt(pos) == '(') {
                pos++;
                long v = sum();
                if (s.charAt(pos++) != ')') {
                    throw new NumberFormatException();
                }
                return v;
            }
            int start = pos;
            while (pos < s.length() && Character.isDigit(s.charAt(pos))) {
                pos++;
            }
            return Long.parseLong(s.substring(start, pos));
        }
    }
}
