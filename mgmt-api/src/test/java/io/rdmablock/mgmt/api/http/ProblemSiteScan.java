package io.rdmablock.mgmt.api.http;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds every place in the management server's main sources that builds or raises an error answer (a problem), by
 * a scan of the source text with comments removed: each {@code ProblemTypes.X} (a problem built here), each call of
 * a helper that raises one ({@link #HELPERS}), and each route handler registration {@code getRoute("op")}. The
 * result counts them per file and token, e.g. {@code ClusterService → {VOLUME_IN_USE=1, ClusterState.deleting=1}};
 * {@link OpenApiConformanceTest} compares it with its table ({@link ProblemSites}) so a new site fails the test
 * until it is declared there and in openapi.yaml.
 */
final class ProblemSiteScan {
    /** Main sources of this module, relative to the module directory (the test's working directory). */
    static final Path MAIN = Path.of("src/main/java/io/rdmablock/mgmt/api");
    /** Most source files scanned (a bound on the walk). */
    private static final int MAX_FILES = 500;

    private static final Pattern TYPE = Pattern.compile("\\bProblemTypes\\.([A-Z][A-Z_]*)\\b");
    /**
     * Calls of the helpers that raise a problem; the token is the match with spaces removed and without the
     * parenthesis. Bare names (no qualifier) must not follow a dot or a word character.
     */
    static final Pattern HELPERS = Pattern.compile(
            "(Problems\\s*(?:\\.|::)\\s*(?:badPath|notFound|methodNotAllowed)\\b"
                    + "|(?:ApiException\\.(?:validation|volumeNotFound|nodeNotFound|noCapacity)"
                    + "|ClusterState\\.(?:deleting|contention|copyNotFound)"
                    + "|NodeKeys\\.contention"
                    + "|(?<![\\w.])(?:exists|notFound|busy|contention|noLeader|insufficientScope|checkNotRollingBackTo"
                    + "|authorize|checkReport|visible)"
                    + "|\\.(?:authorize|checkReport|visible|insufficientScope|checkNotRollingBackTo)"
                    + ")\\s*\\()");

    private static final Pattern ROUTE = Pattern.compile("getRoute\\(\\s*\"([A-Za-z]+)\"\\s*\\)");

    private ProblemSiteScan() {
    }

    /** @return file simple name (without .java) → token → count of problem sites */
    static Map<String, Map<String, Integer>> sites() {
        var out = new TreeMap<String, Map<String, Integer>>();
        for (Path file : javaFiles()) {
            String code = withoutComments(read(file), true);
            var counts = new TreeMap<String, Integer>();
            Matcher t = TYPE.matcher(code);
            while (t.find()) {
                counts.merge(t.group(1), 1, Integer::sum);
            }
            Matcher h = HELPERS.matcher(code);
            while (h.find()) {
                String token = h.group(1).replaceAll("[\\s(]", "").replace("::", ".");
                counts.merge(token.startsWith(".") ? token.substring(1) : token, 1, Integer::sum);
            }
            if (!counts.isEmpty()) {
                out.put(file.getFileName().toString().replace(".java", ""), counts);
            }
        }
        return out;
    }

    /** @return every operation id given a handler with {@code builder.getRoute("id")}, with its file */
    static Map<String, String> routeHandlers() {
        var out = new TreeMap<String, String>();
        for (Path file : javaFiles()) {
            Matcher m = ROUTE.matcher(withoutComments(read(file), false));
            while (m.find()) {
                String previous = out.put(m.group(1), file.getFileName().toString());
                if (previous != null) {
                    throw new AssertionError("operation " + m.group(1) + " gets handlers in " + previous + " and "
                            + file.getFileName() + ": one handler per operation");
                }
            }
        }
        return out;
    }

    private static java.util.List<Path> javaFiles() {
        try (Stream<Path> walk = Files.walk(MAIN)) {
            var files = walk.filter(p -> p.toString().endsWith(".java")).sorted().limit(MAX_FILES + 1).toList();
            if (files.size() > MAX_FILES || files.isEmpty()) {
                throw new AssertionError("expected 1.." + MAX_FILES + " source files under " + MAIN.toAbsolutePath()
                        + ", found " + files.size());
            }
            return files;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @return {@code java} with its comments replaced by a space; string and char literals kept as they are, or
     *         emptied ({@code ""}) when {@code blankStrings}
     */
    static String withoutComments(String java, boolean blankStrings) {
        var out = new StringBuilder(java.length());
        int i = 0;
        int n = java.length();
        while (i < n) {
            char c = java.charAt(i);
            if (c == '"' && java.startsWith("\"\"\"", i)) { // text block
                int end = java.indexOf("\"\"\"", i + 3);
                end = end < 0 ? n : end + 3;
                out.append(blankStrings ? "\"\"" : java.substring(i, end));
                i = end;
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < n && java.charAt(j) != c) {
                    j += java.charAt(j) == '\\' ? 2 : 1;
                }
                j = Math.min(n, j + 1);
                out.append(blankStrings ? c + "" + c : java.substring(i, j));
                i = j;
            } else if (java.startsWith("//", i)) {
                int end = java.indexOf('\n', i);
                i = end < 0 ? n : end;
                out.append(' ');
            } else if (java.startsWith("/*", i)) {
                int end = java.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
                out.append(' ');
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }
}
