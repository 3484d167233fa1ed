package io.rdmablock.tools.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Serializes maps (insertion order kept), lists, strings, numbers, booleans and null as indented JSON like fio's. */
final class JsonWriter {
    private JsonWriter() {
    }

    static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, 0);
        return sb.append('\n').toString();
    }

    private static void write(StringBuilder sb, Object v, int indent) {
        switch (v) {
            case null -> sb.append("null");
            case Map<?, ?> m -> {
                if (m.isEmpty()) {
                    sb.append("{}");
                    return;
                }
                sb.append("{\n");
                int i = 0;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    pad(sb, indent + 2);
                    string(sb, String.valueOf(e.getKey()));
                    sb.append(" : ");
                    write(sb, e.getValue(), indent + 2);
                    sb.append(++i < m.size() ? ",\n" : "\n");
                }
                pad(sb, indent);
                sb.append('}');
            }
            case List<?> l -> {
                if (l.isEmpty()) {
                    sb.append("[]");
                    return;
                }
                sb.append("[\n");
                for (int i = 0; i < l.size(); i++) {
                    pad(sb, indent + 2);
                    write(sb, l.get(i), indent + 2);
                    sb.append(i + 1 < l.size() ? ",\n" : "\n");
                }
                pad(sb, indent);
                sb.append(']');
            }
            case Double d -> sb.append(d.isNaN() || d.isInfinite() ? "0" : String.format(Locale.ROOT, "%.6f", d));
            case Float f -> write(sb, f.doubleValue(), indent);
            case Number n -> sb.append(n);
            case Boolean b -> sb.append(b);
            default -> string(sb, v.toString());
        }
    }

    private static void pad(StringBuilder sb, int n) {
        sb.append(" ".repeat(n));
    }

    private static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
