package io.rdmablock.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Relative links in Markdown files and the anchors GitHub gives their headings, for {@link MarkdownLinksTest}.
 *
 * <p>A link is {@code [text](target)} or {@code ![alt](target)} outside fenced code blocks and inline code spans;
 * targets with a scheme ({@code https:}, {@code mailto:}, {@code file:}) are not checked. A relative target must name
 * an existing file or directory inside the repository; its {@code #anchor}, when the target is a Markdown file (or the
 * link is {@code #anchor} alone), must be one of that file's heading slugs or explicit {@code <a name>}/{@code id}
 * anchors. Slugs follow GitHub's rules (github-slugger): the heading's text (link syntax reduced to its text),
 * lower-cased, every character that is not a letter, a digit, {@code -}, {@code _} or a space removed, each space
 * made a {@code -}; the second heading with the same slug gets {@code -1}, the third {@code -2}.
 */
final class MarkdownLinks {
    /** Most lines read from one file (the largest document has under 1000). */
    static final int MAX_LINES = 20_000;

    private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern FENCE = Pattern.compile("^ {0,3}(```|~~~)");
    private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1");
    private static final Pattern LINK = Pattern.compile("!?\\[([^\\]]*)\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:name|id)=\"([^\"]+)\"");
    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

    /** One link: the file it is in, its 1-based line and its target as written. */
    record Link(Path file, int line, String target) {
        @Override
        public String toString() {
            return file + ":" + line + ": " + target;
        }
    }

    private MarkdownLinks() {
    }

    /** @return GitHub's anchor for a heading's text, before de-duplication (see the class comment) */
    static String slug(String heading) {
        String text = LINK.matcher(heading).replaceAll("$1").toLowerCase(Locale.ROOT);
        var out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (cp == ' ') {
                out.append('-');
            } else if (cp == '-' || cp == '_' || Character.isLetterOrDigit(cp)) {
                out.appendCodePoint(cp);
            }
        }
        return out.toString();
    }

    /** @return the lines of {@code file} outside fenced code blocks; the others are replaced by empty strings */
    static List<String> proseLines(Path file) throws IOException {
        List<String> all = Files.readAllLines(file);
        if (all.size() > MAX_LINES) {
            throw new IOException(file + ": " + all.size() + " lines, more than " + MAX_LINES);
        }
        var out = new ArrayList<String>(all.size());
        String fence = null;
        for (String line : all) {
            Matcher f = FENCE.matcher(line);
            if (fence == null && f.find()) {
                fence = f.group(1);
                out.add("");
            } else if (fence != null) {
                if (line.strip().startsWith(fence)) {
                    fence = null;
                }
                out.add("");
            } else {
                out.add(line);
            }
        }
        return out;
    }

    /** @return every anchor a link may name in {@code file}: heading slugs (de-duplicated) and HTML anchors */
    static Set<String> anchors(Path file) throws IOException {
        var out = new LinkedHashSet<String>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : proseLines(file)) {
            Matcher h = HEADING.matcher(line);
            if (h.matches()) {
                String base = slug(h.group(2));
                int n = seen.merge(base, 1, Integer::sum) - 1;
                out.add(n == 0 ? base : base + "-" + n);
            }
            Matcher a = HTML_ANCHOR.matcher(line);
            while (a.find()) {
                out.add(a.group(1));
            }
        }
        return out;
    }

    /** @return the links of {@code file} whose target has no scheme, in order */
    static List<Link> relativeLinks(Path file) throws IOException {
        var out = new ArrayList<Link>();
        List<String> lines = proseLines(file);
        for (int i = 0; i < lines.size(); i++) {
            String prose = CODE_SPAN.matcher(lines.get(i)).replaceAll("");
            Matcher m = LINK.matcher(prose);
            while (m.find()) {
                String target = m.group(2);
                if (!SCHEME.matcher(target).find()) {
                    out.add(new Link(file, i + 1, target));
                }
            }
        }
        return out;
    }

    /**
     * Checks every relative link of {@code files} (paths inside {@code root}).
     *
     * @param pending paths relative to {@code root} that another change is adding: a link to one of them passes while
     *                it is absent (its anchors are not checked)
     * @return one line per dead link ({@code file:line: target: why}); empty when every link resolves
     */
    static List<String> deadLinks(Path root, List<Path> files, Set<String> pending) throws IOException {
        Path top = root.toAbsolutePath().normalize();
        var dead = new ArrayList<String>();
        Map<Path, Set<String>> anchorCache = new HashMap<>();
        for (Path file : files) {
            Path abs = file.toAbsolutePath().normalize();
            for (Link link : relativeLinks(abs)) {
                String target = link.target();
                int hash = target.indexOf('#');
                String path = hash < 0 ? target : target.substring(0, hash);
                String anchor = hash < 0 ? null : target.substring(hash + 1);
                Path resolved = path.isEmpty() ? abs : abs.getParent().resolve(path).normalize();
                String where = top.relativize(abs) + ":" + link.line() + ": " + target + ": ";
                if (!resolved.startsWith(top)) {
                    dead.add(where + "points outside the repository");
                    continue;
                }
                if (!Files.exists(resolved)) {
                    if (!pending.contains(top.relativize(resolved).toString().replace('\\', '/'))) {
                        dead.add(where + "no such file " + top.relativize(resolved));
                    }
                    continue;
                }
                if (anchor != null && !anchor.isEmpty() && resolved.toString().endsWith(".md")) {
                    Set<String> known = anchorCache.get(resolved);
                    if (known == null) {
                        known = anchors(resolved);
                        anchorCache.put(resolved, known);
                    }
                    if (!known.contains(anchor)) {
                        dead.add(where + "no heading with anchor #" + anchor + " in " + top.relativize(resolved));
                    }
                }
            }
        }
        return dead;
    }
}
