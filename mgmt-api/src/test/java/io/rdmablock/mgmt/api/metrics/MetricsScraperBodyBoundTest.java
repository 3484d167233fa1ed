package io.rdmablock.mgmt.api.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The attack: whatever answers a node's metrics URL sends an endless (or absurdly long) {@code /metrics} body. Before
 * the fix the scraper buffered the whole body ({@code resp.body()}), so the management server's heap grew without
 * bound. Now the scrape fails once {@code maxBytes} are exceeded and the connection is dropped. A raw loopback server
 * plays the node; every wait is bounded.
 */
class MetricsScraperBodyBoundTest {
    private static final long MAX = 64 * 1024;
    private Vertx vertx;
    private HttpClient http;
    private ServerSocket server;

    @BeforeEach
    void setUp() throws IOException {
        vertx = Vertx.vertx();
        http = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout(1000).setIdleTimeout(5));
        server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void tearDown() throws Exception {
        server.close();
        http.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** Serves one connection: {@code head}, then {@code chunk} as HTTP chunks until the client goes away. */
    private AtomicLong serveEndless(String head, boolean chunked) {
        AtomicLong sent = new AtomicLong();
        Thread.ofPlatform().daemon().start(() -> {
            try (Socket s = server.accept()) {
                InputStream in = s.getInputStream();
                byte[] req = new byte[4096];
                in.read(req); // the GET (small, one read on loopback)
                OutputStream out = s.getOutputStream();
                out.write(head.getBytes(StandardCharsets.US_ASCII));
                byte[] line = "rdmablock_target_commands_total{opcode=\"read\"} 1.0\n".repeat(300)
                        .getBytes(StandardCharsets.US_ASCII);
                byte[] size = (Integer.toHexString(line.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
                while (sent.get() < (1L << 34)) { // 16 GiB: never reached, the client resets long before
                    if (chunked) {
                        out.write(size);
                    }
                    out.write(line);
                    if (chunked) {
                        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    }
                    sent.addAndGet(line.length);
                }
            } catch (IOException expected) {
                // the client reset the connection
            }
        });
        return sent;
    }

    private Throwable fetchFailure() throws Exception {
        RequestOptions o = new RequestOptions().setMethod(HttpMethod.GET)
                .setAbsoluteURI("http://127.0.0.1:" + server.getLocalPort() + "/metrics");
        try {
            Buffer b = MetricsScraper.fetch(http, o, MAX).toCompletionStage().toCompletableFuture()
                    .get(20, TimeUnit.SECONDS);
            throw new AssertionError("an endless body was accepted: " + b.length() + " bytes");
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @Test
    void shouldFailTheScrapeOfAnEndlessChunkedBody() {
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            AtomicLong sent = serveEndless("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n", true);
            Throwable t = fetchFailure();
            assertInstanceOf(MetricsScraper.BodyTooLargeException.class, t);
            assertTrue(t.getMessage().contains("max=" + MAX), t.getMessage());
            assertTrue(sent.get() < 64L << 20, "the server could keep sending: " + sent.get() + " bytes");
        });
    }

    @Test
    void shouldFailTheScrapeOfABodyDeclaredTooLong() {
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            serveEndless("HTTP/1.1 200 OK\r\nContent-Length: " + (1L << 34) + "\r\n\r\n", false);
            Throwable t = fetchFailure();
            assertInstanceOf(MetricsScraper.BodyTooLargeException.class, t);
            assertTrue(t.getMessage().contains("declared"), t.getMessage());
        });
    }

    @Test
    void shouldReadABodyWithinTheBound() {
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            String body = "rdmablock_build_info{version=\"x\",commit=\"y\"} 1.0\n";
            Thread.ofPlatform().daemon().start(() -> {
                try (Socket s = server.accept()) {
                    s.getInputStream().read(new byte[4096]);
                    s.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Length: " + body.length()
                            + "\r\nConnection: close\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
                } catch (IOException ignored) {
                    // the test fails on its own
                }
            });
            RequestOptions o = new RequestOptions().setMethod(HttpMethod.GET)
                    .setAbsoluteURI("http://127.0.0.1:" + server.getLocalPort() + "/metrics");
            Buffer b = MetricsScraper.fetch(http, o, MAX).toCompletionStage().toCompletableFuture()
                    .get(20, TimeUnit.SECONDS);
            assertEquals(body, b.toString());
        });
    }
}
