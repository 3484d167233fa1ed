package io.rdmablock.tools.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A fio job file (fio(1) "JOB FILE FORMAT"): INI sections, {@code [global]} options apply to the jobs that follow
 * it, {@code key=value} or bare {@code key} (a flag), comments start with {@code ;} or {@code #} (whole line, or after
 * whitespace), {@code ${VAR}} expands from the environment (left as is when unset).
 */
final class JobFile {
    private static final Pattern VAR = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");

    /** A job section: its name and its options (globals first, then its own). */
    record Section(String name, Map<String, String> options) {
    }

    private JobFile() {
    }

    static List<Section> parse(Path path) throws IOException {
        return parse(Files.readAllLines(path), System::getenv);
    }

    static List<Section> parse(List<String> lines, UnaryOperator<String> env) {
        Map<String, String> global = new LinkedHashMap<>();
        List<Section> jobs = new ArrayList<>();
        Map<String, String> current = null;
        int lineNo = 0;
        for (String raw : lines) {
            lineNo++;
            String line = stripComment(raw).strip();
            if (line.isEmpty()) {
                continue;
            }
            if (line.startsWith("[")) {
                if (!line.endsWith("]")) {
                    throw new IllegalArgumentException("invalid job file: line " + lineNo + ": '" + raw + "'");
                }
                String name = line.substring(1, line.length() - 1).strip();
                if (name.equals("global")) {
                    current = global;
                } else {
                    current = new LinkedHashMap<>(global);
                    jobs.add(new Section(name, current));
                }
                continue;
            }
            if (current == null) {
                throw new IllegalArgumentException("invalid job file: line " + lineNo + ": option outside a section");
            }
            int eq = line.indexOf('=');
            String key = (eq < 0 ? line : line.substring(0, eq)).strip();
            String value = eq < 0 ? "" : expand(line.substring(eq + 1).strip(), env);
            current.put(key, value);
        }
        return jobs;
    }

    private static String stripComment(String s) {
        String t = s.stripLeading();
        if (t.startsWith(";") || t.startsWith("#")) {
            return "";
        }
        for (int i = 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if ((c == '#' || c == ';') && Character.isWhitespace(s.charAt(i - 1))) {
                return s.substring(0, i);
            }
        }
        return s;
    }

    private static String expand(String v, UnaryOperator<String> env) {
        Matcher m = VAR.matcher(v);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String val = env.apply(m.group(1));
            m.appendReplacement(sb, Matcher.quoteReplacement(val != null ? val : m.group()));
        }
        m.appendTail(sb);
        return sb.toString();
    }
}
