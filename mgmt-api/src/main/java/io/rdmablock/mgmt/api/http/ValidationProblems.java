package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.NodeBackground;
import io.rdmablock.mgmt.client.MarkCopyStaleRequest;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.json.schema.OutputUnit;
import io.vertx.openapi.validation.SchemaValidationException;
import io.vertx.openapi.validation.ValidatorException;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns an OpenAPI validation failure into a problem whose detail names the field and its bounds.
 * Order: wrong media type → 415; a body that is not a JSON object → 400 malformed-body; a missing, unknown or
 * wrongly typed top-level field, or a bound the shared {@link Limits} reject → 400 validation naming the field
 * (the Limits text is the same the CLI prints); otherwise the schema error with the field taken from its JSON
 * pointer. The schema stays the judge of validity: this class only words the answer.
 */
final class ValidationProblems {
    private ValidationProblems() {
    }

    static Problem of(RoutingContext ctx, ValidatorException e) {
        for (String param : new String[]{"name", "nodeId"}) { // path parameters first: they are not the body
            String value = ctx.pathParam(param);
            if (value != null) {
                try {
                    Limits.checkName(param, value);
                } catch (IllegalArgumentException bad) {
                    return Problem.of(ProblemTypes.VALIDATION, "Invalid request", 400,
                            "invalid path parameter " + bad.getMessage().replaceFirst("^invalid ", ""));
                }
            }
        }
        String hostNqn = ctx.pathParam("hostNqn");
        if (hostNqn != null) {
            try {
                Limits.checkHostNqn("hostNqn", hostNqn);
            } catch (IllegalArgumentException bad) {
                return Problem.of(ProblemTypes.VALIDATION, "Invalid request", 400,
                        "invalid path parameter " + bad.getMessage().replaceFirst("^invalid ", ""));
            }
        }
        HttpMethod method = ctx.request().method();
        boolean hasBody = method == HttpMethod.POST || method == HttpMethod.PATCH || method == HttpMethod.PUT;
        String contentType = ctx.request().getHeader("Content-Type");
        String body = ctx.body() == null ? null : ctx.body().asString();
        if (hasBody && body != null && !body.isEmpty()) {
            if (contentType == null || !contentType.toLowerCase().startsWith("application/json")) {
                return Problem.of(ProblemTypes.UNSUPPORTED_MEDIA_TYPE, "Unsupported media type", 415,
                        "Content-Type must be application/json, was " + contentType);
            }
            Object decoded;
            try {
                decoded = Json.decodeValue(body);
            } catch (DecodeException d) {
                return Problem.of(ProblemTypes.MALFORMED_BODY, "Malformed body", 400,
                        "the body is not valid JSON: " + firstLine(d.getMessage()));
            }
            if (!(decoded instanceof JsonObject object)) {
                return Problem.of(ProblemTypes.MALFORMED_BODY, "Malformed body", 400, "the body must be a JSON object");
            }
            String limits = limitsMessage(ctx, object);
            if (limits != null) {
                return Problem.of(ProblemTypes.VALIDATION, "Invalid request", 400, limits);
            }
        }
        return Problem.of(ProblemTypes.VALIDATION, "Invalid request", 400, schemaMessage(e));
    }

    /** Top-level fields of a request body: name → JSON type ("string", "integer", "array"); required ones first. */
    private record Shape(List<String> required, Map<String, String> types) {
    }

    private static final Shape CREATE = new Shape(List.of("name", "sizeBytes"), ordered(
            "name", "string", "sizeBytes", "integer", "lbaSize", "integer", "replicas", "integer",
            "minInSync", "integer", "allowedHosts", "array", "requireAuth", "boolean", "qos", "object"));
    private static final Shape STALE = new Shape(List.of("epoch", "reporter"),
            ordered("epoch", "integer", "reporter", "string"));
    private static final Shape UNREACHABLE = new Shape(List.of("epoch", "reporter"),
            ordered("epoch", "integer", "reporter", "string"));
    private static final Shape PROMOTE = new Shape(List.of("nodeId"),
            ordered("nodeId", "string", "acceptDataLoss", "boolean"));
    private static final Shape RESIZE = new Shape(List.of(), ordered("sizeBytes", "integer", "allowedHosts", "array",
            "requireAuth", "boolean", "qos", "object"));
    private static final Shape REGISTER = new Shape(List.of("nodeId", "fabricAddress", "capacityBytes", "freeBytes"),
            ordered("nodeId", "string", "fabricAddress", "string", "metricsUrl", "string", "capacityBytes", "integer",
                    "freeBytes", "integer"));
    private static final Shape HEARTBEAT = new Shape(List.of("freeBytes", "volumes"),
            ordered("freeBytes", "integer", "volumes", "array", "background", "object"));

    /**
     * @return a message naming the field for a body the schema rejected: a missing or unknown field, a wrong
     *         JSON type, or a bound from {@link Limits}; null when none applies (the schema message is used)
     */
    private static String limitsMessage(RoutingContext ctx, JsonObject body) {
        String path = ctx.request().path();
        HttpMethod method = ctx.request().method();
        Shape shape;
        if (method == HttpMethod.POST && "/v1/volumes".equals(path)) {
            shape = CREATE;
        } else if (method == HttpMethod.PATCH && path.startsWith("/v1/volumes/")) {
            shape = RESIZE;
        } else if (method == HttpMethod.PATCH && path.startsWith("/v1/nodes/")) {
            return nodeUpdateMessage(body);
        } else if (method == HttpMethod.POST && "/v1/nodes".equals(path)) {
            shape = REGISTER;
        } else if (method == HttpMethod.POST && path.endsWith("/heartbeat")) {
            shape = HEARTBEAT;
        } else if (method == HttpMethod.POST && path.startsWith("/v1/volumes/") && path.endsWith("/stale")) {
            shape = STALE;
        } else if (method == HttpMethod.POST && path.startsWith("/v1/volumes/") && path.endsWith("/unreachable")) {
            shape = UNREACHABLE;
        } else if (method == HttpMethod.POST && path.startsWith("/v1/volumes/") && path.endsWith("/promote")) {
            shape = PROMOTE;
        } else {
            return null;
        }
        for (String field : shape.required()) {
            if (!body.containsKey(field) || body.getValue(field) == null) {
                return "invalid " + field + ": missing, required fields=" + shape.required();
            }
        }
        for (String field : body.fieldNames()) {
            String type = shape.types().get(field);
            if (type == null) {
                return "invalid " + field + ": unknown field, allowed fields=" + shape.types().keySet();
            }
            Object value = body.getValue(field);
            boolean ok = switch (type) {
                case "string" -> value instanceof String;
                case "integer" -> value instanceof Integer || value instanceof Long;
                case "array" -> value instanceof JsonArray;
                case "boolean" -> value instanceof Boolean;
                case "object" -> value instanceof JsonObject;
                default -> true;
            };
            if (!ok) {
                return "invalid " + field + ": " + field + "=" + io.vertx.core.json.Json.encode(value)
                        + ", must be " + switch (type) {
                            case "integer" -> "an integer";
                            case "array" -> "an array";
                            case "boolean" -> "a boolean";
                            case "object" -> "an object";
                            default -> "a string";
                        };
            }
        }
        try {
            if (shape == CREATE) {
                Limits.check(VolumeRoutes.createRequest(body));
            } else if (shape == STALE) {
                Limits.check(new MarkCopyStaleRequest(body.getLong("epoch"), body.getString("reporter")));
            } else if (shape == UNREACHABLE) {
                Limits.check(new io.rdmablock.mgmt.client.UnreachableReport(body.getLong("epoch"),
                        body.getString("reporter")));
            } else if (shape == PROMOTE) {
                Limits.check(new io.rdmablock.mgmt.client.PromoteRequest(body.getString("nodeId"), false));
            } else if (shape == RESIZE) {
                if (body.getValue("sizeBytes") != null) {
                    Limits.checkSize("sizeBytes", body.getLong("sizeBytes"));
                }
                if (body.getValue("qos") != null) {
                    VolumeRoutes.qos(body.getJsonObject("qos")).check();
                }
            } else if (shape == REGISTER) {
                Limits.check(new RegisterNodeRequest(body.getString("nodeId"), body.getString("fabricAddress"),
                        body.getString("metricsUrl"), body.getLong("capacityBytes"), body.getLong("freeBytes")));
            } else if (body.getLong("freeBytes") < 0) {
                return "invalid freeBytes: freeBytes=" + body.getLong("freeBytes") + ", min=0";
            }
        } catch (IllegalArgumentException bound) {
            return bound.getMessage();
        } catch (ClassCastException wrongType) {
            return null; // nested type error: the schema message names it
        }
        return null;
    }

    /** The body of {@code PATCH /v1/nodes/{nodeId}}: {@code {"background": {"maxMiBps", "minMiBps"} | null}}. */
    private static String nodeUpdateMessage(JsonObject body) {
        for (String field : body.fieldNames()) {
            if (!field.equals("background")) {
                return "invalid " + field + ": unknown field, allowed fields=[background]";
            }
        }
        if (!body.containsKey("background")) {
            return "invalid background: missing, required fields=[background] (null = the node's start-up values)";
        }
        Object value = body.getValue("background");
        if (value == null) {
            return null;
        }
        if (!(value instanceof JsonObject b)) {
            return "invalid background: background=" + io.vertx.core.json.Json.encode(value)
                    + ", must be an object or null";
        }
        List<String> fields = List.of("maxMiBps", "minMiBps");
        for (String field : b.fieldNames()) {
            if (!fields.contains(field)) {
                return "invalid background." + field + ": unknown field, allowed fields=" + fields;
            }
        }
        for (String field : fields) {
            Object v = b.getValue(field);
            String name = "background." + field;
            if (v == null) {
                return "invalid " + name + ": missing, required fields=" + fields;
            }
            String bounds = "min=" + NodeBackground.MIN_MIB_S + ", max=" + NodeBackground.MAX_MIB_S + " (MiB/s)";
            if (!(v instanceof Integer || v instanceof Long)) {
                return "invalid " + name + ": " + name + "=" + io.vertx.core.json.Json.encode(v)
                        + ", must be an integer, " + bounds;
            }
            long n = ((Number) v).longValue();
            if (n < NodeBackground.MIN_MIB_S || n > NodeBackground.MAX_MIB_S) {
                return Limits.invalid(name, Long.toString(n), bounds).getMessage();
            }
        }
        try {
            new NodeBackground(b.getInteger("maxMiBps"), b.getInteger("minMiBps")).check();
        } catch (IllegalArgumentException bound) {
            return bound.getMessage();
        }
        return null;
    }

    private static Map<String, String> ordered(String... pairs) {
        var map = new LinkedHashMap<String, String>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put(pairs[i], pairs[i + 1]);
        }
        return map;
    }

    private static final java.util.regex.Pattern PARAMETER =
            java.util.regex.Pattern.compile("^The value of (\\w+) parameter (\\S+) is invalid\\. Reason: (.*)$");

    private static String schemaMessage(ValidatorException e) {
        var parameter = PARAMETER.matcher(e.getMessage() == null ? "" : e.getMessage());
        if (parameter.matches()) { // a path or query parameter: name it, not "body"
            return "invalid " + parameter.group(1) + " parameter " + parameter.group(2) + ": " + parameter.group(3);
        }
        if (e instanceof SchemaValidationException s && s.getOutputUnit() != null) {
            OutputUnit unit = deepest(s.getOutputUnit());
            String field = field(unit.getInstanceLocation());
            String keyword = unit.getKeywordLocation() == null ? "" : unit.getKeywordLocation();
            String error = unit.getError() == null ? e.getMessage() : unit.getError();
            if (keyword.endsWith("/required") || keyword.endsWith("/additionalProperties")) {
                return "invalid body: " + error;
            }
            return "invalid " + field + ": " + error;
        }
        return e.getMessage();
    }

    private static OutputUnit deepest(OutputUnit unit) {
        OutputUnit best = unit;
        if (unit.getErrors() != null) {
            for (OutputUnit child : unit.getErrors()) {
                OutputUnit d = deepest(child);
                if (depth(d) > depth(best) || best.getError() == null) {
                    best = d;
                }
            }
        }
        return best;
    }

    private static int depth(OutputUnit unit) {
        String loc = unit.getInstanceLocation();
        return loc == null ? -1 : loc.split("/").length;
    }

    /** JSON pointer {@code #/allowedHosts/1} or {@code /allowedHosts/1} → {@code allowedHosts[1]}. */
    static String field(String pointer) {
        if (pointer == null || pointer.isEmpty() || "#".equals(pointer) || "/".equals(pointer)) {
            return "body";
        }
        var out = new StringBuilder();
        for (String part : pointer.replaceFirst("^#", "").split("/")) {
            if (part.isEmpty()) {
                continue;
            }
            if (part.chars().allMatch(Character::isDigit)) {
                out.append('[').append(part).append(']');
            } else {
                if (!out.isEmpty()) {
                    out.append('.');
                }
                out.append(part.replace("~1", "/").replace("~0", "~"));
            }
        }
        return out.isEmpty() ? "body" : out.toString();
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}
