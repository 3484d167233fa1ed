package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** HTTP-level faults a hostile or broken client can cause: every answer is problem+json, nothing holds a connection. */
@ExtendWith(VertxExtension.class)
class HttpHygieneTest {
    private static final long MIB = 1L << 20;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness().deploy(vertx);
        api.register("n1", 1L << 30);
    }

    @Test
    void shouldAnswerAWrongTokenWith401InvalidToken() throws Exception {
        var r = api.send("POST", "/v1/volumes", create("v"), "wrong", "application/json");
        assertProblem(r, 401, ProblemTypes.UNAUTHORIZED);
        assertTrue(r.headers().firstValue("WWW-Authenticate").orElse("").contains("error=\"invalid_token\""),
                r.headers().map().toString());
        assertEquals(404, api.get("/v1/volumes/v").statusCode(), "nothing created");
    }

    @Test
    void shouldRefuseJsonWithAComment() throws Exception {
        var r = api.send("POST", "/v1/volumes", "/* c */" + create("v"));
        assertProblem(r, 400, ProblemTypes.MALFORMED_BODY);
        assertEquals(404, api.get("/v1/volumes/v").statusCode());
    }

    @Test
    void shouldRefuseJsonWithAByteOrderMark() throws Exception {
        assertProblem(api.send("POST", "/v1/volumes", "\uFEFF" + create("v")), 400, ProblemTypes.MALFORMED_BODY);
        assertEquals(404, api.get("/v1/volumes/v").statusCode());
    }

    @Test
    void shouldRefuseJsonWithADuplicateKey() throws Exception {
        var r = api.send("POST", "/v1/volumes",
                "{\"name\":\"v\",\"sizeBytes\":" + MIB + ",\"sizeBytes\":" + (1L << 40) + "}");
        Problem p = assertProblem(r, 400, ProblemTypes.MALFORMED_BODY);
        assertTrue(p.detail().contains("sizeBytes"), p.detail());
        assertEquals(404, api.get("/v1/volumes/v").statusCode());
    }

    @Test
    void shouldAnswerAMalformedPercentEscapeWithProblemJson() throws Exception {
        String answer = raw("GET /v1/volumes/% HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assertStatusAndProblem(answer, 400);
        assertTrue(answer.contains("path"), answer);
        assertEquals(200, api.get("/v1/volumes").statusCode(), "the server still answers");
    }

    @Test
    void shouldAnswerAnOverlongRequestLineWithProblemJson() throws Exception {
        String answer = raw("GET /v1/volumes/" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assertStatusAndProblem(answer, 414);
    }

    @Test
    void shouldAnswerOverlongHeadersWithProblemJson() throws Exception {
        String answer = raw("GET /v1/volumes HTTP/1.1\r\nHost: x\r\nX-Big: " + "b".repeat(20_000)
                + "\r\nConnection: close\r\n\r\n");
        assertStatusAndProblem(answer, 431);
    }

    @Test
    void shouldCloseAConnectionThatSendsHalfARequest() throws Exception {
        try (Socket s = new Socket("127.0.0.1", api.verticle.actualPort())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/volumes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ApiHarness.TOKEN
                    + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"na")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long t0 = System.nanoTime();
            byte[] all = readAll(s.getInputStream());
            long waitedMs = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(waitedMs >= ApiHarness.REQUEST_TIMEOUT_MS / 2, "closed after " + waitedMs + " ms");
            String answer = new String(all, StandardCharsets.UTF_8);
            assertTrue(answer.isEmpty() || answer.startsWith("HTTP/1.1 408"), answer);
        } catch (SocketTimeoutException e) {
            throw new AssertionError("a half-sent request held the connection for 30 s", e);
        }
    }

    @Test
    void shouldCloseAConnectionThatTricklesItsHeaders() throws Exception {
        try (Socket s = new Socket("127.0.0.1", api.verticle.actualPort())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write("GET /v1/volumes HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long t0 = System.nanoTime();
            var trickle = Thread.ofVirtual().start(() -> { // a header byte every 200 ms: never idle
                try {
                    for (int i = 0; i < 200; i++) {
                        Thread.sleep(200); // a wait by design: the scenario is a slow client
                        out.write('a');
                        out.flush();
                    }
                } catch (IOException | InterruptedException closed) {
                    // the server closed the connection
                }
            });
            byte[] all = readAll(s.getInputStream());
            long waitedMs = (System.nanoTime() - t0) / 1_000_000;
            trickle.interrupt();
            assertTrue(waitedMs < ApiHarness.REQUEST_TIMEOUT_MS + 3_000, "closed after " + waitedMs + " ms");
            String answer = new String(all, StandardCharsets.UTF_8);
            assertTrue(answer.isEmpty() || answer.startsWith("HTTP/1.1 408"), answer);
        } catch (SocketTimeoutException e) {
            throw new AssertionError("trickled headers held the connection for 30 s", e);
        }
    }

    @Test
    void shouldCloseAnIdleKeptAliveConnection() throws Exception {
        try (Socket s = new Socket("127.0.0.1", api.verticle.actualPort())) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write(("GET /health HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            long t0 = System.nanoTime();
            String answer = new String(readAll(s.getInputStream()), StandardCharsets.UTF_8);
            long waitedMs = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
            assertTrue(waitedMs >= ApiHarness.IDLE_TIMEOUT_MS / 2 && waitedMs < ApiHarness.IDLE_TIMEOUT_MS + 3_000,
                    "closed after " + waitedMs + " ms");
        } catch (SocketTimeoutException e) {
            throw new AssertionError("an idle connection was kept for 30 s", e);
        }
    }

    @Test
    void shouldNotLogAnErrorWhenAClientHangsUp() throws Exception {
        var err = new ByteArrayOutputStream();
        var julRecords = new java.util.concurrent.ConcurrentLinkedQueue<java.util.logging.LogRecord>();
        var jul = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                julRecords.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        java.util.logging.Logger.getLogger("").addHandler(jul);
        java.io.PrintStream saved = System.err;
        System.setErr(new java.io.PrintStream(new OutputStream() {
            @Override
            public synchronized void write(int b) {
                saved.write(b);
                err.write(b);
            }

            @Override
            public synchronized void write(byte[] b, int off, int len) {
                saved.write(b, off, len);
                err.write(b, off, len);
            }
        }, true));
        try {
            for (int i = 0; i < 3; i++) {
                try (Socket s = new Socket("127.0.0.1", api.verticle.actualPort())) { // mid-request: half a body
                    s.getOutputStream().write(("POST /v1/volumes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                            + ApiHarness.TOKEN + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                            + "{\"na").getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream().flush();
                    // a wait by design: the client dies while the server holds half a body (no event says the
                    // server read it; an RST before that would only test a refused connection)
                    Thread.sleep(100);
                    s.setSoLinger(true, 0); // RST, like a killed client
                }
                try (Socket s = new Socket("127.0.0.1", api.verticle.actualPort())) { // mid-response
                    s.setReceiveBufferSize(1024);
                    s.getOutputStream().write(("GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n"
                            + "GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream().flush();
                    s.getInputStream().read(new byte[100]);
                    s.setSoLinger(true, 0);
                }
            }
            // proves that nothing is logged, including when the request timer of the half body fires: that timer
            // is a Vert.x timer on the wall clock (no clock to step, no event to wait for), so this stays a wait
            Thread.sleep(ApiHarness.REQUEST_TIMEOUT_MS + 500);
            assertEquals(200, api.get("/v1/volumes").statusCode());
        } finally {
            System.setErr(saved);
            java.util.logging.Logger.getLogger("").removeHandler(jul);
        }
        String logged = err.toString(StandardCharsets.UTF_8);
        assertTrue(!logged.contains(" ERROR ") && !logged.contains("SEVERE"), logged);
        for (var r : julRecords) {
            assertTrue(r.getLevel().intValue() < java.util.logging.Level.SEVERE.intValue(),
                    r.getLoggerName() + ": " + r.getMessage() + " " + r.getThrown());
        }
    }

    @Test
    void shouldNameTheQueryParameterInAValidationProblem() throws Exception {
        Problem p = assertProblem(api.send("DELETE", "/v1/volumes/a?force=maybe", null, ApiHarness.TOKEN, null),
                400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("force"), p.detail());
    }

    private static String create(String name) {
        return "{\"name\":\"" + name + "\",\"sizeBytes\":" + MIB + "}";
    }

    private String raw(String request) throws IOException {
        try (Socket s = new Socket("127.0.0.1", api.verticle.actualPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new String(readAll(s.getInputStream()), StandardCharsets.UTF_8);
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        var buf = new ByteArrayOutputStream();
        byte[] b = new byte[8192];
        try {
            for (int n; (n = in.read(b)) > 0; ) {
                buf.write(b, 0, n);
            }
        } catch (java.net.SocketException reset) {
            // the server closed: what arrived before counts
        }
        return buf.toByteArray();
    }

    private static void assertStatusAndProblem(String answer, int status) {
        assertTrue(answer.matches("(?s)^HTTP/1\\.[01] " + status + " .*"), answer);
        int body = answer.indexOf("\r\n\r\n");
        String headers = answer.substring(0, body).toLowerCase();
        assertTrue(headers.contains("content-type: " + Problem.MEDIA_TYPE), answer);
        Problem p = Json.read(answer.substring(body + 4), Problem.class);
        assertEquals(status, p.status(), answer);
        assertTrue(p.detail() != null && !p.detail().isEmpty(), answer);
    }
}
