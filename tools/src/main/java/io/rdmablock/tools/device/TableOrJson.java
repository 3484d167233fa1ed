package io.rdmablock.tools.device;

/**
 * The tools' {@code -o/--output table|json}, the dialect of every {@code rdmablock} command (issue 40). {@code text},
 * the tools' old word for {@code table}, is still accepted so existing scripts keep working; help and docs say
 * {@code table}.
 */
public final class TableOrJson {
    /** Help text naming the values. */
    public static final String VALUES = "table or json (default: ${DEFAULT-VALUE})";

    private TableOrJson() {
    }

    /** @return whether {@code value} is a known format: table, json, or the old alias text */
    public static boolean valid(String value) {
        return "table".equals(value) || "json".equals(value) || "text".equals(value);
    }

    /** @return whether {@code value} asks for JSON */
    public static boolean json(String value) {
        return "json".equals(value);
    }

    /** @return the message for a value that is not valid */
    public static String invalid(String value) {
        return "invalid --output: --output=" + value + ", must be one of table, json";
    }
}
