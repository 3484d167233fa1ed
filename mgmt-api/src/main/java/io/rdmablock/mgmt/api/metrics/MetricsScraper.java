package io.rdmablock.mgmt.api.metrics;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeState;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every {@code intervalMs}, fetches {@code /metrics} of every node that is not down and has a metrics URL, and feeds
 * the text to {@link VolumeStats}, so the dashboard reads live per-volume rates from the management server alone
 * (the browser never talks to a node). A node whose fetch is still running is skipped; a failed fetch is logged
 * once per node until it succeeds again (connect timeout 1 s, idle timeout 2 s). Nodes that went down are forgotten.
 *
 * <p>A body is read up to {@link #MAX_BODY_BYTES}: a longer one (declared by Content-Length, or streamed past the
 * bound) fails that scrape with {@link BodyTooLargeException} and its connection is reset, so a node (or anything
 * behind a metrics URL) cannot make the management server buffer an endless body.
 */
public final class MetricsScraper {
    private static final Logger LOG = LoggerFactory.getLogger(MetricsScraper.class);
    /** Largest {@code /metrics} body read, in bytes (a node's is tens of KiB per hundred volumes). */
    static final long MAX_BODY_BYTES = 8L << 20;

    private final Vertx vertx;
    private final ClusterService cluster;
    private final VolumeStats stats;
    private final long intervalMs;
    private final HttpClient http;
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
    private final Set<String> failing = ConcurrentHashMap.newKeySet();
    private long timerId = -1;

    public MetricsScraper(Vertx vertx, ClusterService cluster, VolumeStats stats, long intervalMs) {
        this.vertx = vertx;
        this.cluster = cluster;
        this.stats = stats;
        this.intervalMs = intervalMs;
        this.http = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout(1000).setIdleTimeout(2));
    }

    public void start() {
        timerId = vertx.setPeriodic(intervalMs, id -> round());
    }

    public void stop() {
        if (timerId >= 0) {
            vertx.cancelTimer(timerId);
        }
        http.close();
    }

    /** A node listing still on a worker (a slow metadata store): the next rounds are skipped, never queued up. */
    private boolean listing;

    /** After a failed listing, none until this time (nanoTime): the metadata store is left to requests meanwhile. */
    private long pausedUntil;

    private void round() {
        if (listing || System.nanoTime() - pausedUntil < 0) {
            return;
        }
        listing = true;
        vertx.executeBlocking(cluster.nodes()::listNodes, false).onComplete(ar -> {
            listing = false;
            if (ar.succeeded()) {
                scrapeAll(ar.result());
            } else {
                pausedUntil = System.nanoTime() + ClusterService.SWEEP_BACKOFF_NS;
                LOG.warn("metrics scrape: cannot list nodes: {}", ar.cause().toString());
            }
        });
    }

    private void scrapeAll(List<Node> nodes) {
        for (Node n : nodes) {
            if (n.state() == NodeState.DOWN || n.metricsUrl() == null || n.metricsUrl().isEmpty()) {
                stats.forgetNode(n.nodeId());
                continue;
            }
            if (inFlight.add(n.nodeId())) {
                scrape(n);
            }
        }
    }

    private void scrape(Node n) {
        RequestOptions options;
        try {
            options = new RequestOptions().setMethod(HttpMethod.GET).setAbsoluteURI(n.metricsUrl())
                    .setIdleTimeout(2000);
        } catch (RuntimeException e) {
            inFlight.remove(n.nodeId());
            warnOnce(n, e);
            return;
        }
        fetch(http, options, MAX_BODY_BYTES)
                .onComplete(ar -> {
                    inFlight.remove(n.nodeId());
                    if (ar.succeeded()) {
                        if (failing.remove(n.nodeId())) {
                            LOG.info("metrics scrape of node {} works again", n.nodeId());
                        }
                        stats.record(n.nodeId(), System.currentTimeMillis(), ar.result().toString());
                    } else {
                        warnOnce(n, ar.cause());
                    }
                });
    }

    /**
     * GETs {@code options} and reads a 200 response's body of at most {@code maxBytes} bytes. Fails with "HTTP
     * &lt;status&gt;" on another status, with {@link BodyTooLargeException} (connection reset) past {@code maxBytes},
     * or with the transport's error. Any thread; the body handlers run on the client's event loop.
     */
    static Future<Buffer> fetch(HttpClient http, RequestOptions options, long maxBytes) {
        return http.request(options)
                .compose(req -> req.send())
                .compose(resp -> resp.statusCode() == 200 ? boundedBody(resp, maxBytes)
                        : Future.failedFuture("HTTP " + resp.statusCode()));
    }

    private static Future<Buffer> boundedBody(HttpClientResponse resp, long maxBytes) {
        Promise<Buffer> body = Promise.promise();
        resp.exceptionHandler(body::tryFail); // also takes the reset below
        String declared = resp.getHeader("Content-Length");
        try {
            if (declared != null && Long.parseLong(declared.trim()) > maxBytes) {
                body.tryFail(new BodyTooLargeException(
                        "body of " + declared.trim() + " bytes declared, max=" + maxBytes));
                resp.request().reset();
                return body.future();
            }
        } catch (NumberFormatException e) {
            body.tryFail("bad Content-Length: " + declared);
            resp.request().reset();
            return body.future();
        }
        Buffer buf = Buffer.buffer();
        resp.handler(chunk -> {
            if (body.future().isComplete()) {
                return;
            }
            if (buf.length() + (long) chunk.length() > maxBytes) {
                body.tryFail(new BodyTooLargeException("body longer than max=" + maxBytes + " bytes"));
                resp.request().reset();
                return;
            }
            buf.appendBuffer(chunk);
        });
        resp.endHandler(v -> body.tryComplete(buf));
        return body.future();
    }

    /** A response body beyond the bound of {@link #fetch}. */
    static final class BodyTooLargeException extends RuntimeException {
        BodyTooLargeException(String message) {
            super("metrics response too large: " + message, null, false, false);
        }
    }

    private void warnOnce(Node n, Throwable e) {
        if (failing.add(n.nodeId())) {
            LOG.warn("metrics scrape of node {} failed: url={}: {}", n.nodeId(), n.metricsUrl(), e.toString());
        }
    }
}
