package io.rdmablock.mgmt.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** A one-handler HTTP server on an ephemeral loopback port that records requests. */
final class FakeServer implements AutoCloseable {
    record Seen(String method, String path, String authorization, String contentType, String body) {
    }

    record Answer(int status, String contentType, String body, Map<String, String> headers) {
        Answer(int status, String contentType, String body) {
            this(status, contentType, body, Map.of());
        }
    }

    final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final HttpServer server;
    private boolean closed;

    FakeServer(Function<Seen, Answer> handler) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> handle(exchange, handler));
        server.start();
    }

    private void handle(HttpExchange exchange, Function<Seen, Answer> handler) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        Seen s = new Seen(exchange.getRequestMethod(), exchange.getRequestURI().toString(),
                exchange.getRequestHeaders().getFirst("Authorization"),
                exchange.getRequestHeaders().getFirst("Content-Type"), body);
        seen.add(s);
        Answer a = handler.apply(s);
        byte[] bytes = a.body().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", a.contentType());
        a.headers().forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
        exchange.sendResponseHeaders(a.status(), bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            exchange.getResponseBody().write(bytes);
        }
        exchange.close();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        server.stop(0);
    }
}
