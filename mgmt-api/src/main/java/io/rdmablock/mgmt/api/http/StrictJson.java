package io.rdmablock.mgmt.api.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.InputTrustHandler;

import java.io.IOException;

/**
 * Checks every request body that claims to be JSON against RFC 8259 strictly, before the OpenAPI validator (whose
 * parser, Vert.x's Jackson codec, accepts comments and keeps the last of two equal keys): a body with a byte order
 * mark, a comment, a duplicate object key, trailing content after the value, or any other syntax error is answered
 * 400 {@code malformed-body} naming what and where (line, column), and nothing is changed. An empty body passes
 * (routes without a body). Runs after the body handler, so the body size limit (413) applies first.
 */
final class StrictJson implements InputTrustHandler {
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    @Override
    public void handle(RoutingContext ctx) {
        String contentType = ctx.request().getHeader("Content-Type");
        String body = ctx.body() == null ? null : ctx.body().asString();
        if (body == null || body.isEmpty() || contentType == null || !contentType.toLowerCase().contains("json")) {
            ctx.next();
            return;
        }
        String fault = fault(body);
        if (fault != null) {
            Problems.send(ctx, 400, ProblemTypes.MALFORMED_BODY, "Malformed body", fault);
            return;
        }
        ctx.next();
    }

    /** @return what is wrong with the JSON text, or null when it is one strict RFC 8259 value */
    static String fault(String body) {
        if (body.charAt(0) == '\uFEFF') {
            return "the body starts with a byte order mark (U+FEFF); JSON text must not (RFC 8259 section 8.1)";
        }
        try (JsonParser p = FACTORY.createParser(body)) {
            if (p.nextToken() == null) {
                return "the body holds no JSON value";
            }
            p.skipChildren();
            JsonToken extra = p.nextToken();
            if (extra != null) {
                return "content after the JSON value at " + where(p.currentTokenLocation());
            }
            return null;
        } catch (JsonParseException e) {
            String msg = e.getOriginalMessage();
            if (msg != null && msg.startsWith("Duplicate field")) {
                msg = "duplicate key " + msg.substring("Duplicate field".length()).trim();
            }
            return "invalid JSON: " + msg + " at " + where(e.getLocation());
        } catch (IOException e) {
            return "invalid JSON: " + e.getMessage();
        }
    }

    private static String where(JsonLocation l) {
        return l == null ? "unknown position" : "line " + l.getLineNr() + ", column " + l.getColumnNr();
    }
}
