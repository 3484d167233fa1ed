package io.rdmablock.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** A plain text table: upper-case header, columns left-aligned and separated by two spaces. */
final class Table {
    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    Table(String... header) {
        this.header = List.of(header);
    }

    Table row(Object... cells) {
        var row = new ArrayList<String>();
        for (Object c : cells) {
            row.add(c == null ? "-" : c.toString());
        }
        rows.add(row);
        return this;
    }

    void print(PrintWriter out) {
        int[] widths = new int[header.size()];
        for (int i = 0; i < widths.length; i++) {
            widths[i] = header.get(i).length();
            for (var r : rows) {
                widths[i] = Math.max(widths[i], r.get(i).length());
            }
        }
        line(out, header, widths);
        for (var r : rows) {
            line(out, r, widths);
        }
        out.flush();
    }

    private static void line(PrintWriter out, List<String> cells, int[] widths) {
        var sb = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            String c = cells.get(i);
            sb.append(c);
            if (i < cells.size() - 1) {
                sb.append(" ".repeat(widths[i] - c.length() + 2));
            }
        }
        out.println(sb.toString().stripTrailing());
    }
}
