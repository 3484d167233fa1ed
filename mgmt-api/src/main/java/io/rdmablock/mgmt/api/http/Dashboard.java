package io.rdmablock.mgmt.api.http;

import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The operator dashboard: a static single-page app (plain HTML, JavaScript and CSS under the classpath folder
 * {@value #ROOT}; no build step, nothing fetched from elsewhere) served at {@code /ui/}; {@code /} and {@code /ui}
 * redirect there (302). The files are read into memory once, at start. The page reads {@code /v1/volumes},
 * {@code /v1/nodes} and {@code /v1/stats/volumes} of this server only (the Content-Security-Policy allows nothing
 * else) and sends the token the operator typed in (or gave as the URL fragment {@code #token=T}) as
 * {@code Authorization: Bearer} on every call: the read token shows the cluster, the cluster token also enables
 * create, resize, delete and drain (the page tells them apart by {@link BearerAuth#SCOPE_HEADER}); the token lives
 * in the tab's sessionStorage. The files themselves are served without a token.
 */
final class Dashboard {
    /** Classpath folder of the page's files. */
    static final String ROOT = "io/rdmablock/mgmt/api/http/ui/";
    private static final Map<String, String> FILES = Map.of(
            "index.html", "text/html; charset=utf-8",
            "app.js", "text/javascript; charset=utf-8",
            "plot.js", "text/javascript; charset=utf-8",
            "style.css", "text/css; charset=utf-8");
    private static final String CSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; "
            + "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

    private final Map<String, Buffer> content;

    Dashboard() {
        var loaded = new java.util.HashMap<String, Buffer>();
        for (String name : FILES.keySet()) {
            loaded.put(name, Buffer.buffer(read(ROOT + name)));
        }
        content = Map.copyOf(loaded);
    }

    /** Adds the routes to {@code router}; {@code tag} runs first (names the request for metrics). */
    void mount(Router router, java.util.function.Consumer<RoutingContext> tag) {
        router.get("/").handler(ctx -> {
            tag.accept(ctx);
            redirect(ctx);
        });
        router.get("/ui").handler(ctx -> { // Vert.x matches /ui and /ui/ here
            tag.accept(ctx);
            if (ctx.request().path().endsWith("/")) {
                send(ctx, "index.html");
            } else {
                redirect(ctx);
            }
        });
        router.get("/ui/:file").handler(ctx -> {
            tag.accept(ctx);
            String file = ctx.pathParam("file");
            if (!FILES.containsKey(file)) {
                ctx.next(); // 404 problem
                return;
            }
            send(ctx, file);
        });
    }

    private static void redirect(RoutingContext ctx) {
        ctx.response().setStatusCode(302).putHeader("Location", "/ui/").end();
    }

    private void send(RoutingContext ctx, String file) {
        ctx.response().putHeader("Content-Type", FILES.get(file))
                .putHeader("Cache-Control", "no-cache")
                .putHeader("Content-Security-Policy", CSP)
                .putHeader("X-Content-Type-Options", "nosniff")
                .putHeader("Referrer-Policy", "no-referrer")
                .end(content.get(file));
    }

    private static byte[] read(String resource) {
        try (InputStream in = Dashboard.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing classpath resource " + resource);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }
}
