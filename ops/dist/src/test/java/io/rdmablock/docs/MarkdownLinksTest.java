package io.rdmablock.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every relative link in README.md, docs/*.md and the READMEs under ops/ points to a file of this repository, and to
 * a heading of it when it names an anchor (GitHub's slugs, {@link MarkdownLinks}); README.md's documentation index
 * links every file in docs/. Moving a section between files cannot leave a dead link behind.
 */
class MarkdownLinksTest {
    /** The repository root: this module is ops/dist. */
    private static final Path REPO = Path.of(System.getProperty("user.dir")).resolve("../..").normalize();
    /** Deepest directory under ops/ searched for README.md files. */
    private static final int OPS_DEPTH = 4;
    /**
     * Documents that README.md links and that changes made alongside this one add (issue 40: the three-machine
     * deployment and the Grafana alert rules). A link to one passes only while it is absent; once it exists the test
     * fails until it is removed from here, so this list cannot outlive its reason.
     */
    private static final Set<String> PENDING = Set.of();

    private static List<Path> documents() throws IOException {
        assertTrue(Files.isRegularFile(REPO.resolve("README.md")), "no README.md at the repository root " + REPO);
        var out = new ArrayList<Path>();
        out.add(REPO.resolve("README.md"));
        out.addAll(docsFiles());
        try (Stream<Path> ops = Files.walk(REPO.resolve("ops"), OPS_DEPTH)) {
            ops.filter(p -> p.getFileName().toString().equals("README.md"))
                    .filter(p -> !REPO.relativize(p).toString().contains("target"))
                    .sorted().forEach(out::add);
        }
        return out;
    }

    private static List<Path> docsFiles() throws IOException {
        try (Stream<Path> docs = Files.list(REPO.resolve("docs"))) {
            return docs.filter(p -> p.toString().endsWith(".md")).sorted().toList();
        }
    }

    @Test
    void shouldResolveEveryRelativeLinkToAFileAndHeading() throws IOException {
        List<Path> files = documents();
        assertTrue(files.size() >= 10, "expected README.md, docs/*.md and ops READMEs, found " + files);
        List<String> dead = MarkdownLinks.deadLinks(REPO, files, PENDING);
        assertTrue(dead.isEmpty(), dead.size() + " dead link(s):\n" + String.join("\n", dead));
        int links = 0;
        for (Path f : files) {
            links += MarkdownLinks.relativeLinks(f).size();
        }
        assertTrue(links >= 50, "only " + links + " relative links found: is the link pattern still right?");
    }

    @Test
    void shouldKeepThePendingListToDocumentsStillMissing() {
        for (String p : PENDING) {
            assertFalse(Files.exists(REPO.resolve(p)), p + " exists now: remove it from MarkdownLinksTest.PENDING");
        }
    }

    @Test
    void shouldLinkEveryDocsFileFromTheReadmeIndex() throws IOException {
        Set<String> linked = MarkdownLinks.relativeLinks(REPO.resolve("README.md")).stream()
                .map(l -> l.target().replaceFirst("#.*", "")).collect(Collectors.toSet());
        var missing = new ArrayList<String>();
        for (Path doc : docsFiles()) {
            String rel = "docs/" + doc.getFileName();
            if (!linked.contains(rel)) {
                missing.add(rel);
            }
        }
        assertTrue(missing.isEmpty(), "README.md's documentation index does not link " + missing);
    }

    @Test
    void shouldMakeGitHubSlugs() {
        assertEquals("stack-only-rows-rdmablock-stack-bench-memory-provider-null-store",
                MarkdownLinks.slug("Stack-only rows: `rdmablock stack-bench` (memory provider, null store)"));
        assertEquals("14-pending-queues-limits-and-timeout", MarkdownLinks.slug("1.4 Pending queues: limits and timeout"));
        assertEquals("failover-issue-12--contract-between-the-parts",
                MarkdownLinks.slug("Failover (issue 12) — contract between the parts"));
        assertEquals("see-the-docs_here", MarkdownLinks.slug("See [the docs](x.md)_here"));
    }

    @Test
    void shouldReportMissingFilesMissingAnchorsAndLinksOutsideTheRepository(@TempDir Path root) throws IOException {
        Files.createDirectories(root.resolve("docs"));
        Files.writeString(root.resolve("docs/b.md"), "# Title\n\n## Same\n\n## Same\n\n```\n# not a heading\n```\n");
        Files.writeString(root.resolve("a.md"), String.join("\n",
                "[ok](docs/b.md) [ok](docs/b.md#same-1) [ok](#top) <a name=\"top\"></a>",
                "[dead](docs/c.md) [bad anchor](docs/b.md#not-a-heading) [outside](../x.md)",
                "`[in code](nowhere.md)` [web](https://example.org/x.md) [pending](docs/p.md)",
                "```", "[fenced](nowhere.md)", "```", ""));
        List<String> dead = MarkdownLinks.deadLinks(root, List.of(root.resolve("a.md")), Set.of("docs/p.md"));
        assertEquals(List.of(
                "a.md:2: docs/c.md: no such file docs/c.md",
                "a.md:2: docs/b.md#not-a-heading: no heading with anchor #not-a-heading in docs/b.md",
                "a.md:2: ../x.md: points outside the repository"), dead);
        assertEquals(Set.of("title", "same", "same-1"), MarkdownLinks.anchors(root.resolve("docs/b.md")));
    }
}
