package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.HostCredentials;
import io.rdmablock.mgmt.api.cluster.NodeCredentials;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Route;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * openapi.yaml against the code (issue 40): every route the started server's router holds is declared, every
 * declared operation has exactly one handler, each operation's {@code security} is what {@link BearerAuth} and the
 * credential scopes enforce, and every error the code can answer on a route (status, and problem type named in that
 * response's description) is declared on it, no more; the problem types with their statuses are listed in the
 * description. What the code can answer comes from {@link ProblemSites}, a table of every problem-building site,
 * which is checked against a scan of the sources ({@link ProblemSiteScan}) so a new site cannot slip in undeclared.
 */
@ExtendWith(VertxExtension.class)
class OpenApiConformanceTest {
    /** Operations that answer without reading the metadata store (no 503 metadata-unavailable). */
    static final Set<String> STORELESS = Set.of(
            "getLeader", // reports the store's reachability in its 200 answer
            "volumeStats"); // answered from memory (the nodes' scraped /metrics)
    /** Error statuses every operation declares per route (the others are the HTTP layer's, in the description). */
    private static final Set<Integer> PER_ROUTE = Set.of(307, 400, 401, 403, 404, 409, 503);
    private static final String BASE = "https://rdmablock.io/problems/";
    private static final Pattern SLUG = Pattern.compile("[a-z]+(?:-[a-z]+)*");
    /** A problem type with its statuses in the description's list: {@code volume-exists (409)}. */
    private static final Pattern LISTED = Pattern.compile("([a-z]+(?:-[a-z]+)*) \\((\\d{3}(?:, \\d{3})*)\\)");
    private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options");

    /** An operation of the document. */
    private record Op(String id, String method, String path, Map<String, Object> body, boolean hasParameters) {
    }

    private static Map<String, Object> doc;
    private static Map<String, Op> ops;
    private static Set<String> slugs;

    @BeforeAll
    @SuppressWarnings("unchecked")
    static void load() throws IOException, IllegalAccessException {
        try (InputStream in = MgmtVerticle.class.getClassLoader().getResourceAsStream(MgmtVerticle.CONTRACT)) {
            doc = new Yaml(new SafeConstructor(new LoaderOptions()))
                    .load(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        ops = new TreeMap<>();
        var paths = (Map<String, Map<String, Object>>) doc.get("paths");
        for (var p : paths.entrySet()) {
            boolean pathParams = p.getValue().get("parameters") instanceof List<?> l && !l.isEmpty();
            for (var m : p.getValue().entrySet()) {
                if (METHODS.contains(m.getKey())) {
                    var op = (Map<String, Object>) m.getValue();
                    String id = (String) op.get("operationId");
                    boolean params = pathParams || op.get("parameters") instanceof List<?> l && !l.isEmpty();
                    Op previous = ops.put(id, new Op(id, m.getKey(), p.getKey(), op, params || op.containsKey(
                            "requestBody")));
                    assertEquals(null, previous, "operationId " + id + " declared twice");
                }
            }
        }
        slugs = new TreeSet<>();
        for (var f : ProblemTypes.class.getDeclaredFields()) {
            if (Modifier.isPublic(f.getModifiers()) && f.getType() == String.class) {
                slugs.add(((String) f.get(null)).substring(BASE.length()));
            }
        }
        assertTrue(ops.size() > 20 && slugs.size() > 30, ops.size() + " operations, " + slugs.size() + " types");
    }

    @Test
    void everyDeclaredOperationHasOneHandlerAndEveryHandlerIsDeclared() {
        assertEquals(ops.keySet(), ProblemSiteScan.routeHandlers().keySet(),
                "operationIds of openapi.yaml vs builder.getRoute(\"...\") handlers in the code");
    }

    @Test
    void everyRouteOfTheStartedRouterIsDeclared(Vertx vertx) throws Exception {
        ApiHarness api = new ApiHarness().deploy(vertx);
        var declared = new TreeSet<String>();
        ops.values().forEach(op -> declared.add(op.method().toUpperCase() + " "
                + op.path().replaceAll("\\{(\\w+)}", ":$1")));
        var routed = new TreeSet<String>();
        var beside = new TreeSet<String>();
        for (Route r : api.verticle.routes().getRoutes()) {
            if (r.getPath() == null || r.methods() == null || r.methods().isEmpty()) {
                continue; // root handlers and the failure handler: no path of their own
            }
            for (HttpMethod m : r.methods()) {
                String key = m.name() + " " + r.getPath();
                if (r.getPath().startsWith("/v1/")) {
                    routed.add(key);
                } else {
                    beside.add(r.getPath());
                }
            }
        }
        assertEquals(declared, routed, "routes under /v1/ of the started router vs operations of openapi.yaml");
        String description = description();
        for (String path : beside) { // /health, /metrics, /openapi.yaml, the dashboard: named in the description
            String shown = path.replace(":file", "");
            assertTrue(description.contains("`GET " + shown) || description.contains("`" + shown + "`"),
                    "route GET " + path + " beside the contract is not named in openapi.yaml's description");
        }
        assertTrue(beside.size() >= 4, "routes beside the contract: " + beside);
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyOperationDeclaresTheSecurityTheCodeEnforces() {
        assertEquals(List.of(Map.of("clusterToken", List.of())), doc.get("security"), "top-level security");
        var wrong = new ArrayList<String>();
        for (Op op : ops.values()) {
            var expected = new TreeSet<String>();
            if (!BearerAuth.isOpen(samplePath(op))) {
                expected.add("clusterToken");
                if (op.method().equals("get")) {
                    expected.add("readToken");
                }
                if (NodeCredentials.NODE_OPERATIONS.contains(op.id())) {
                    expected.add("nodeCredential");
                }
                if (HostCredentials.HOST_OPERATIONS.contains(op.id())) {
                    expected.add("hostCredential");
                }
            }
            var requirements = (List<Map<String, Object>>) op.body().getOrDefault("security", doc.get("security"));
            var declared = new TreeSet<String>();
            requirements.forEach(r -> declared.addAll(r.keySet()));
            if (!expected.equals(declared)) {
                wrong.add(op.id() + ": declared " + declared + ", the code accepts " + expected);
            }
        }
        assertEquals(List.of(), wrong, "security per operation");
    }

    /**
     * Walks every operation on a started server with each kind of caller and checks the answer against the declared
     * security: no token is 401 where a scheme is declared; the read token, a node credential and a host credential
     * (well-formed, of no registered node or issued credential) are 403 where their scheme is not declared, and get
     * past the scope check where it is (401 for the unknown credentials: they are verified against the store).
     */
    @Test
    @SuppressWarnings("unchecked")
    void everyRouteAnswersEachKindOfCallerAsItsSecurityDeclares(Vertx vertx) throws Exception {
        ApiHarness api = new ApiHarness().deploy(vertx);
        String secret = "A".repeat(43);
        var callers = new LinkedHashMap<String, String>();
        callers.put("readToken", ApiHarness.READ_TOKEN);
        callers.put("nodeCredential", "rbn1:x1:" + secret);
        callers.put("hostCredential", "rbh1:x1:" + secret);
        var wrong = new ArrayList<String>();
        for (Op op : ops.values()) {
            var requirements = (List<Map<String, Object>>) op.body().getOrDefault("security", doc.get("security"));
            var declared = new TreeSet<String>();
            requirements.forEach(r -> declared.addAll(r.keySet()));
            String method = op.method().toUpperCase();
            String body = sampleBody(op);
            String type = body == null ? null : "application/json";
            int none = api.send(method, samplePath(op), body, null, type).statusCode();
            if ((none == 401) != !declared.isEmpty()) {
                wrong.add(op.id() + " without a token: " + none + ", declared security " + declared);
            }
            for (var c : callers.entrySet()) {
                int status = api.send(method, samplePath(op), body, c.getValue(), type).statusCode();
                boolean admitted = declared.contains(c.getKey());
                boolean ok = !admitted ? status == 403
                        : c.getKey().equals("readToken") ? status != 401 && status != 403 : status == 401;
                if (!ok) {
                    wrong.add(op.id() + " with a " + c.getKey() + ": " + status + ", declared security " + declared);
                }
            }
        }
        assertEquals("", String.join("\n", wrong), "answers per caller vs declared security");
    }

    @Test
    void theSiteTableHoldsEveryProblemSiteOfTheSources() {
        var table = new TreeMap<String, Map<String, Integer>>();
        for (var s : ProblemSites.SITES) {
            Integer previous = table.computeIfAbsent(s.file(), f -> new TreeMap<>()).put(s.token(), s.count());
            assertEquals(null, previous, "row " + s.file() + " " + s.token() + " twice in ProblemSites");
            for (var a : s.answers()) {
                assertTrue(slugs.contains(a.type()), "ProblemSites: unknown type " + a.type());
            }
            for (String op : s.ops()) {
                assertTrue(op.startsWith("*") || ops.containsKey(op), "ProblemSites: unknown operation " + op);
            }
        }
        var scanned = ProblemSiteScan.sites();
        assertTrue(scanned.size() > 10, "scanned files with problem sites: " + scanned.keySet());
        assertEquals(scanned, table, "problem sites in the sources (file -> token -> count) vs ProblemSites:"
                + " a new site must be entered there with the operations it answers on, and declared in"
                + " openapi.yaml");
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyOperationDeclaresTheErrorsTheCodeCanAnswerAndNoOthers() {
        var expected = expectedAnswers();
        var wrong = new ArrayList<String>();
        for (Op op : ops.values()) {
            Map<Integer, Set<String>> want = expected.getOrDefault(op.id(), Map.of());
            var responses = (Map<Object, Map<String, Object>>) op.body().get("responses");
            var declared = new TreeMap<Integer, Set<String>>();
            responses.forEach((code, response) -> {
                int status = Integer.parseInt(code.toString());
                if (PER_ROUTE.contains(status)) {
                    declared.put(status, named(String.valueOf(describe(response))));
                }
            });
            if (!want.equals(declared)) {
                wrong.add(op.id() + ":\n    declared " + declared + "\n    the code " + want);
            }
        }
        assertEquals("", String.join("\n", wrong), "error answers per operation (status -> problem types named"
                + " in that response's description)");
    }

    @Test
    void theDescriptionListsEveryProblemTypeWithItsStatuses() {
        var listed = new TreeMap<String, Set<Integer>>();
        Matcher m = LISTED.matcher(description());
        while (m.find()) {
            if (slugs.contains(m.group(1))) {
                for (String s : m.group(2).split(", ")) {
                    listed.computeIfAbsent(m.group(1), k -> new TreeSet<>()).add(Integer.parseInt(s));
                }
            }
        }
        var answered = new TreeMap<String, Set<Integer>>();
        for (var s : ProblemSites.SITES) {
            for (var a : s.answers()) {
                answered.computeIfAbsent(a.type(), k -> new TreeSet<>()).add(a.status());
            }
        }
        assertEquals(slugs, answered.keySet(), "ProblemTypes constants vs types some site answers");
        assertEquals(answered, listed, "problem types with their statuses: the code vs openapi.yaml's description"
                + " list ('slug (status, ...)')");
    }

    /** @return operationId → status → problem types the code can answer there (per-route statuses only) */
    static Map<String, Map<Integer, Set<String>>> expectedAnswers() {
        var out = new TreeMap<String, Map<Integer, Set<String>>>();
        for (var s : ProblemSites.SITES) {
            for (Op op : ops.values()) {
                if (s.ops().stream().anyMatch(g -> applies(g, op))) {
                    for (var a : s.answers()) {
                        if (PER_ROUTE.contains(a.status())) {
                            out.computeIfAbsent(op.id(), k -> new TreeMap<>())
                                    .computeIfAbsent(a.status(), k -> new TreeSet<>()).add(a.type());
                        }
                    }
                }
            }
        }
        return out;
    }

    /** @return whether the table's operation entry {@code g} (an id or a {@code *group}) covers {@code op} */
    private static boolean applies(String g, Op op) {
        boolean read = op.method().equals("get") || op.method().equals("head");
        return switch (g) {
            case "*any" -> false; // the HTTP layer: the description, not per route
            case "*secured" -> !BearerAuth.isOpen(samplePath(op));
            case "*readScope" -> !read;
            case "*nodeScope" -> !NodeCredentials.NODE_OPERATIONS.contains(op.id());
            case "*hostScope" -> !HostCredentials.HOST_OPERATIONS.contains(op.id());
            case "*input" -> op.hasParameters();
            case "*body" -> op.body().containsKey("requestBody");
            case "*write" -> !read && op.path().startsWith("/v1/");
            case "*runtimeRead" -> read && MgmtVerticle.runtimeState(samplePath(op));
            case "*store" -> !STORELESS.contains(op.id());
            default -> {
                if (g.startsWith("*")) {
                    throw new AssertionError("unknown group " + g);
                }
                yield g.equals(op.id());
            }
        };
    }

    /**
     * @return the description of a response: its own, else that of the component it refers to (a description
     *         beside {@code $ref} overrides the component's, OpenAPI 3.1)
     */
    @SuppressWarnings("unchecked")
    private static Object describe(Map<String, Object> response) {
        if (response.containsKey("description") || !(response.get("$ref") instanceof String ref)) {
            return response.get("description");
        }
        String prefix = "#/components/responses/";
        assertTrue(ref.startsWith(prefix), "response $ref " + ref);
        var components = (Map<String, Map<String, Map<String, Object>>>) doc.get("components");
        return components.get("responses").get(ref.substring(prefix.length())).get("description");
    }

    /** @return the problem type slugs named in a response description */
    private static Set<String> named(String text) {
        var out = new TreeSet<String>();
        Matcher m = SLUG.matcher(text);
        while (m.find()) {
            if (slugs.contains(m.group())) {
                out.add(m.group());
            }
        }
        return out;
    }

    /** @return the operation's path with every {@code {param}} replaced by a valid sample value */
    private static String samplePath(Op op) {
        return op.path().replace("{hostNqn}", "nqn.2014-08.org.example%3Ah1").replaceAll("\\{\\w+}", "x1");
    }

    /** Request bodies the validator accepts, by request schema (the scope check runs after validation). */
    private static final Map<String, String> SAMPLE_BODIES = Map.ofEntries(
            Map.entry("CreateVolumeRequest", "{\"name\":\"x1\",\"sizeBytes\":1048576}"),
            Map.entry("ResizeVolumeRequest", "{\"sizeBytes\":2097152}"),
            Map.entry("MarkCopyStaleRequest", "{\"epoch\":1,\"reporter\":\"x1\"}"),
            Map.entry("CopyTransition", "{\"epoch\":1,\"reporter\":\"x1\"}"),
            Map.entry("UnreachableReport", "{\"epoch\":1,\"reporter\":\"x1\"}"),
            Map.entry("PromoteRequest", "{\"nodeId\":\"x1\"}"),
            Map.entry("CreateSnapshotRequest", "{\"name\":\"s1\"}"),
            Map.entry("RollbackRequest", "{\"snapshot\":\"s1\"}"),
            Map.entry("RegisterNodeRequest", "{\"nodeId\":\"x1\",\"fabricAddress\":\"127.0.0.1:4420\","
                    + "\"capacityBytes\":1073741824,\"freeBytes\":1073741824}"),
            Map.entry("HeartbeatRequest", "{\"freeBytes\":0,\"volumes\":[]}"),
            Map.entry("UpdateNodeRequest", "{\"background\":{\"maxMiBps\":40,\"minMiBps\":4}}"),
            Map.entry("SetHostRequest", "{\"dhchapSecret\":\"DHHC-1:00:x:\"}"),
            Map.entry("IssueHostCredentialRequest", "{\"hostNqn\":\"nqn.2014-08.org.example:h1\"}"));

    /** @return a body the validator accepts for the operation, or null when it takes none */
    @SuppressWarnings("unchecked")
    private static String sampleBody(Op op) {
        if (!(op.body().get("requestBody") instanceof Map<?, ?> request)) {
            return null;
        }
        var content = (Map<String, Map<String, Map<String, Object>>>) request.get("content");
        String ref = String.valueOf(content.get("application/json").get("schema").get("$ref"));
        String body = SAMPLE_BODIES.get(ref.substring(ref.lastIndexOf('/') + 1));
        assertTrue(body != null, "no sample body for " + ref + " (" + op.id() + ")");
        return body;
    }

    @SuppressWarnings("unchecked")
    private static String description() {
        return String.valueOf(((Map<String, Object>) doc.get("info")).get("description"));
    }
}
