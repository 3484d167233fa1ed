package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.json.schema.OutputUnit;
import io.vertx.openapi.validation.SchemaValidationException;
import io.vertx.openapi.validation.ValidatorException;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns an OpenAPI validation failure into a problem whose detail names the field and its bounds.
 * Order: wrong media type → 415; a body that is not a JSON object → 400 malformed-body; a body the shared
 * {@link Limits} reject → 400 validation with the Limits message (the same text the CLI prints); otherwise the
 * schema error with the field taken from its JSON pointer.
 */
final class ValidationProblems {
    private ValidationProblems() {
    }

    static Problem of(RoutingContext ctx, ValidatorException e) {
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

    /** @return the Limits message for a well-typed body that breaks a bound, else null */
    private static String limitsMessage(RoutingContext ctx, JsonObject body) {
        String path = ctx.request().path();
        HttpMethod method = ctx.request().method();
        try {
            if (method == HttpMethod.POST && "/v1/volumes".equals(path)) {
                Limits.check(new CreateVolumeRequest(body.getString("name"), body.getLong("sizeBytes", 0L),
                        body.getInteger("lbaSize", 4096), body.getInteger("replicas", 1),
                        strings(body.getJsonArray("allowedHosts"))));
            } else if (method == HttpMethod.PATCH && path.startsWith("/v1/volumes/")) {
                Limits.checkSize("sizeBytes", body.getLong("sizeBytes", 0L));
            } else if (method == HttpMethod.POST && "/v1/nodes".equals(path)) {
                Limits.check(new io.rdmablock.mgmt.client.RegisterNodeRequest(body.getString("nodeId"),
                        body.getString("fabricAddress"), body.getString("metricsUrl"),
                        body.getLong("capacityBytes", 0L), body.getLong("freeBytes", 0L)));
            }
        } catch (IllegalArgumentException bound) {
            return bound.getMessage();
        } catch (ClassCastException wrongType) {
            return null; // the schema message names the type
        }
        return null;
    }

    private static String schemaMessage(ValidatorException e) {
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

    private static List<String> strings(JsonArray array) {
        var out = new ArrayList<String>();
        if (array != null) {
            for (Object o : array) {
                out.add(o instanceof String s ? s : String.valueOf(o));
            }
        }
        return out;
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}
