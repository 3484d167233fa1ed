package io.rdmablock.tools.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * A fio job file (fio(1) "JOB FILE FORMAT"): INI sections, {@code [global]} options apply to the jobs that follow
 * it, {@code key=value} or bare {@code key} (a flag), comments start with {@code ;} or {@code #} (whole line, or after
 * whitespace); values get fio's substitutions ({@link JobVariables}: {@code ${VAR}} from the environment, the empty
 * string when unset, with a warning on stderr; {@code $pagesize}, {@code $mb_memory}, {@code $ncpus} and math on them).
 */
final class JobFile {
    /** A job section: its name and its options (globals first, then its own). */
    record Section(String name, Map<String, String> options) {
    }

    private JobFile() {
    }

    static List<Section> parse(Path path) throws IOException {
        java.util.Set<String> unset = new java.util.TreeSet<>();
        List<Section> jobs = parse(Files.readAllLines(path), System::getenv, JobVariables.systemKeywords(), unset);
        if (!unset.isEmpty()) {
            System.err.println("rdmablock bench: warning: " + path + ": environment variable(s) " + String.join(", ",
                    unset) + " not set: substituted by an empty string (as fio)");
        }
        return jobs;
    }

    static List<Section> parse(List<String> lines, UnaryOperator<String> env) {
        return parse(lines, env, JobVariables.systemKeywords(), new java.util.TreeSet<>());
    }

    /** @param unset receives the names of unset environment variables found in values */
    static List<Section> parse(List<String> lines, UnaryOperator<String> env, JobVariables.Keywords kw,
                               java.util.Set<String> unset) {
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
            String value = eq < 0 ? "" : JobVariables.expand(key, line.substring(eq + 1).strip(), env, kw, unset);
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
}
