package io.rdmablock.mgmt.api.http;

import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.InputTrustHandler;
import io.vertx.ext.web.handler.PlatformHandler;

/**
 * The HTTP layer's own faults as problem+json, like every other error of the API:
 * <ul>
 * <li>{@link #invalidRequest}: a request the HTTP/1.1 decoder refused before routing (request line longer than the
 *     server's limit → 414, headers larger than the limit → 431, anything else malformed → 400); the connection is
 *     closed after the answer.</li>
 * <li>{@link #armRequestTimeout} / {@link #disarmRequestTimeout}: a request whose body has not fully arrived within
 *     {@code requestTimeoutMs} of routing (a half-sent or trickled request) gets 408 and its connection is closed,
 *     so it cannot hold a connection and a body buffer for ever. The timer stops once the body is complete: a slow
 *     handler (store fsync) is never cut off by it, so a 408 always means "not applied".</li>
 * <li>{@link HeaderTimeout}: a connection whose first request's headers have not arrived whole within
 *     {@code requestTimeoutMs} of its opening (half a request line, headers trickled byte by byte) is closed without
 *     an answer (the decoder has nothing to answer yet). Later requests on a kept-alive connection are bounded by the
 *     idle timeout of the server options.</li>
 * </ul>
 */
final class HttpFaults {
    private static final String TIMER = "rdmablock.requestTimer";
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HttpFaults.class);

    private HttpFaults() {
    }

    /** @return the handler for {@code HttpServer.invalidRequestHandler} */
    static Handler<HttpServerRequest> invalidRequest() {
        return req -> {
            DecoderResult result = req.decoderResult();
            Throwable cause = result == null ? null : result.cause();
            Problem p;
            if (cause instanceof TooLongHttpLineException) {
                p = Problem.of(ProblemTypes.URI_TOO_LONG, "URI too long", 414,
                        "the request line is longer than " + MgmtVerticle.MAX_INITIAL_LINE_BYTES + " bytes");
            } else if (cause instanceof TooLongHttpHeaderException) {
                p = Problem.of(ProblemTypes.HEADERS_TOO_LARGE, "Request header fields too large", 431,
                        "the request headers are larger than " + MgmtVerticle.MAX_HEADER_BYTES + " bytes");
            } else {
                p = Problem.of(ProblemTypes.MALFORMED_BODY, "Malformed request", 400,
                        "the request could not be decoded as HTTP/1.1"
                                + (cause == null || cause.getMessage() == null ? "" : ": " + cause.getMessage()));
            }
            Problems.closeAfterAnswer(req);
            req.response().setStatusCode(p.status()).putHeader("Content-Type", Problem.MEDIA_TYPE).end(Json.write(p));
        };
    }

    /** @return a root handler that starts the request timer (install before the body handler) */
    static PlatformHandler armRequestTimeout(long requestTimeoutMs) {
        return ctx -> {
            long id = ctx.vertx().setTimer(requestTimeoutMs, t -> timedOut(ctx, requestTimeoutMs));
            ctx.put(TIMER, id);
            ctx.addEndHandler(v -> ctx.vertx().cancelTimer(id));
            ctx.next();
        };
    }

    /** @return a root handler that stops the timer once the body is complete (install after the body handler; an input-trust handler, the first kind Vert.x Web runs after the body) */
    static InputTrustHandler disarmRequestTimeout() {
        return ctx -> {
            Long id = ctx.get(TIMER);
            if (id != null) {
                ctx.vertx().cancelTimer(id);
            }
            ctx.next();
        };
    }

    private static void timedOut(RoutingContext ctx, long requestTimeoutMs) {
        if (ctx.response().ended() || ctx.response().headWritten()) {
            return;
        }
        Problems.send(ctx, 408, ProblemTypes.REQUEST_TIMEOUT, "Request timeout",
                "the request did not arrive whole within " + requestTimeoutMs + " ms");
        ctx.request().connection().close();
    }

    /**
     * Closes a connection whose first request has not arrived (headers complete) within a bound. Install
     * {@link #armed} as the server's connection handler and wrap its request and invalid-request handlers with
     * {@link #then}. Used on the server's event loop only.
     */
    static final class HeaderTimeout {
        private final Vertx vertx;
        private final long timeoutMs;
        private final java.util.Map<HttpConnection, Long> timers = new java.util.concurrent.ConcurrentHashMap<>();

        /** @param timeoutMs the bound from the connection's opening, ms, &gt; 0 */
        HeaderTimeout(Vertx vertx, long timeoutMs) {
            this.vertx = vertx;
            this.timeoutMs = timeoutMs;
        }

        /** Arms the timer of a new connection. */
        void armed(HttpConnection connection) {
            long id = vertx.setTimer(timeoutMs, t -> {
                if (timers.remove(connection) != null) {
                    LOG.debug("closing {}: no complete request headers within {} ms", connection.remoteAddress(),
                            timeoutMs);
                    connection.close();
                }
            });
            timers.put(connection, id);
            connection.closeHandler(v -> {
                Long pending = timers.remove(connection);
                if (pending != null) {
                    vertx.cancelTimer(pending);
                }
            });
        }

        /** @return {@code next}, after disarming the timer of the request's connection */
        Handler<HttpServerRequest> then(Handler<HttpServerRequest> next) {
            return req -> {
                Long pending = timers.remove(req.connection());
                if (pending != null) {
                    vertx.cancelTimer(pending);
                }
                next.handle(req);
            };
        }
    }
}
