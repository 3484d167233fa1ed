package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The HTTP exchange under {@link MgmtClient} and its per-resource clients: the configured URLs and which answered
 * last, the bearer token, the JDK {@link HttpClient}, and one call's failover among URLs, the one redirect it
 * follows, its time budget and its errors (as the {@link MgmtClient} class documentation says). Thread-safe.
 */
final class MgmtTransport {
    private final List<URI> baseUris;
    private final AtomicInteger current = new AtomicInteger();
    /** The bearer token; the node agent switches it to the node's credential ({@link #useToken}). */
    private volatile String token;
    private final Duration requestTimeout;
    private final HttpClient http;

    /** See {@link MgmtClient#MgmtClient(List, String, Duration, javax.net.ssl.SSLContext)}. */
    MgmtTransport(List<URI> baseUris, String token, Duration requestTimeout, javax.net.ssl.SSLContext sslContext) {
        Objects.requireNonNull(baseUris, "baseUris");
        if (baseUris.isEmpty() || baseUris.size() > MgmtClient.MAX_URLS) {
            throw new IllegalArgumentException("invalid management URL list: " + baseUris.size()
                    + " URLs, min=1, max=" + MgmtClient.MAX_URLS);
        }
        List<URI> roots = new ArrayList<>();
        for (URI u : baseUris) {
            String base = Objects.requireNonNull(u, "baseUris element").toString();
            URI root = URI.create(base.endsWith("/") ? base.substring(0, base.length() - 1) : base);
            if (roots.contains(root)) {
                throw new IllegalArgumentException("invalid management URL list: " + root + " is listed twice");
            }
            roots.add(root);
        }
        this.baseUris = List.copyOf(roots);
        this.token = token == null || token.isEmpty() ? null : token;
        this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(requestTimeout)
                .version(HttpClient.Version.HTTP_1_1).followRedirects(HttpClient.Redirect.NEVER);
        if (sslContext != null) {
            builder.sslContext(sslContext);
        }
        this.http = builder.build();
    }

    /** @return the server root used now: the one that answered last (at first the first URL) */
    URI baseUri() {
        return baseUris.get(current.get());
    }

    /** @return every configured server root, in the order given */
    List<URI> baseUris() {
        return baseUris;
    }

    /** Sends {@code newToken} from the next call on (null or empty: none). */
    void useToken(String newToken) {
        this.token = newToken == null || newToken.isEmpty() ? null : newToken;
    }

    /** @return the bearer token sent now, or null */
    String token() {
        return token;
    }

    /** See {@link MgmtClient#health()}. */
    boolean health() {
        int start = current.get();
        for (int i = 0; i < baseUris.size(); i++) {
            int index = (start + i) % baseUris.size();
            try {
                HttpResponse<String> response = http.send(request("GET",
                        URI.create(baseUris.get(index) + "/health"), null, requestTimeout),
                        HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    current.set(index);
                    return true;
                }
            } catch (IOException e) {
                // next
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }

    /** One call ({@link #exchange}), its answer read as {@code type}. */
    <T> T send(String method, String path, Object body, Class<T> type) {
        String text = exchange(method, path, body);
        return Json.read(text, type);
    }

    /** One call ({@link #exchange}), its answer read as {@code type} (a generic list). */
    <T> T send(String method, String path, Object body, TypeReference<T> type) {
        String text = exchange(method, path, body);
        try {
            return Json.MAPPER.readValue(text, type);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("invalid JSON answer to " + method + " " + path + ": "
                    + e.getOriginalMessage(), e);
        }
    }

    /**
     * One call: {@code body} as JSON (null: none) to {@code path} of the current URL, then the others on failure,
     * following one redirect to a configured URL; all within the request timeout.
     *
     * @return the body of the 2xx answer
     * @throws MgmtException            the server's problem+json
     * @throws MgmtUnavailableException no server answered
     */
    String exchange(String method, String path, Object body) {
        String json = body == null ? null : Json.write(body);
        long deadline = System.nanoTime() + requestTimeout.toNanos();
        int start = current.get();
        List<Integer> untried = new ArrayList<>();
        for (int i = 0; i < baseUris.size(); i++) {
            untried.add((start + i) % baseUris.size());
        }
        List<String> failures = new ArrayList<>();
        Problem lastProblem = null;
        Throwable lastCause = null;
        boolean redirected = false;
        Integer redirectTo = null;
        URI redirectUri = null;
        while (redirectTo != null || !untried.isEmpty()) {
            int index;
            URI target;
            if (redirectTo != null) {
                index = redirectTo;
                target = redirectUri;
                untried.remove(redirectTo);
                redirectTo = null;
            } else {
                index = untried.removeFirst();
                target = URI.create(baseUris.get(index) + path);
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                failures.add(target + ": not tried, the call's " + requestTimeout.toMillis() + " ms were spent");
                break;
            }
            Duration share = Duration.ofNanos(Math.max(1_000_000L, remaining / (untried.size() + 1)));
            HttpResponse<String> response;
            try {
                response = http.send(request(method, target, json, share),
                        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            } catch (javax.net.ssl.SSLHandshakeException e) {
                failures.add(target + ": " + TlsTrust.explain(e));
                lastCause = e;
                continue;
            } catch (IOException e) {
                failures.add(target + ": " + (e.getCause() instanceof javax.net.ssl.SSLHandshakeException h
                        ? TlsTrust.explain(h) : describe(e, share)));
                lastCause = e;
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new MgmtUnavailableException(method + " " + target + " interrupted", e);
            }
            int status = response.statusCode();
            if (status >= 200 && status < 300) {
                current.set(index);
                return response.body();
            }
            if (status == 307 || status == 308) {
                String location = response.headers().firstValue("Location").orElse(null);
                if (redirected || location == null) {
                    // a follower still naming a leader that did not answer (killed: its election key lives until
                    // the lease TTL): no leader is reachable now, which the caller may retry, as a 503 no-leader
                    failures.add(target + ": " + status + (location == null ? " without Location"
                            : " to " + location + " after a redirect (only one is followed)"));
                    continue;
                }
                URI resolved = target.resolve(location);
                int known = indexOf(resolved);
                if (known < 0) {
                    throw new MgmtException(new Problem(ProblemTypes.NOT_LEADER, "Redirect refused", status,
                            method + " " + target + " was redirected to " + resolved + ", which is not one of the "
                                    + "configured management URLs " + baseUris + "; not followed (the token is "
                                    + "only sent to those): configure the leader's advertised URL", null));
                }
                redirected = true;
                redirectTo = known;
                redirectUri = resolved;
                continue;
            }
            Problem problem = problemOf(response, method + " " + path);
            if (status == 503 && (ProblemTypes.NO_LEADER.equals(problem.type())
                    || ProblemTypes.METADATA_UNAVAILABLE.equals(problem.type()))) {
                failures.add(target + ": " + problem);
                lastProblem = problem;
                continue;
            }
            throw new MgmtException(problem);
        }
        // nothing answered: the next call starts with the next URL
        current.set((start + 1) % baseUris.size());
        String tried = String.join("; ", failures);
        if (lastProblem != null) {
            if (baseUris.size() == 1 && failures.size() == 1) {
                throw new MgmtException(lastProblem);
            }
            throw new MgmtException(new Problem(lastProblem.type(), lastProblem.title(), lastProblem.status(),
                    method + " " + path + " failed on every management URL: " + tried, lastProblem.instance(),
                    lastProblem.needed(), lastProblem.available(), lastProblem.epoch()));
        }
        if (baseUris.size() == 1 && failures.size() == 1) { // "GET http://h:p/v1/x failed: connection refused"
            throw new MgmtUnavailableException(method + " " + failures.getFirst().replaceFirst(": ", " failed: "),
                    lastCause, true);
        }
        throw new MgmtUnavailableException(method + " " + path + " failed on every management URL (" + tried + ")",
                lastCause, true);
    }

    private static String describe(IOException e, Duration timeout) {
        if (e instanceof java.net.http.HttpConnectTimeoutException || e instanceof java.net.http.HttpTimeoutException) {
            return "no answer within " + timeout.toMillis() + " ms";
        }
        if (e instanceof java.net.ConnectException) {
            return "connection refused" + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")");
        }
        return e.toString();
    }

    /** @return the index of the configured URL with the scheme, host and port of {@code uri}, or -1 */
    private int indexOf(URI uri) {
        for (int i = 0; i < baseUris.size(); i++) {
            URI base = baseUris.get(i);
            if (base.getScheme().equalsIgnoreCase(String.valueOf(uri.getScheme()))
                    && base.getHost().equalsIgnoreCase(String.valueOf(uri.getHost()))
                    && port(base) == port(uri)) {
                return i;
            }
        }
        return -1;
    }

    private static int port(URI uri) {
        if (uri.getPort() >= 0) {
            return uri.getPort();
        }
        return "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    private HttpRequest request(String method, URI uri, String json, Duration timeout) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                .timeout(timeout)
                .header("Accept", "application/json, " + Problem.MEDIA_TYPE);
        if (token != null) {
            builder.header("Authorization", "Bearer " + token);
        }
        if (json != null) {
            builder.header("Content-Type", "application/json");
            builder.method(method, HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
        } else {
            builder.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return builder.build();
    }

    /** Decodes a problem answer; a non-problem error body becomes a problem of type {@link ProblemTypes#INTERNAL}. */
    static Problem problemOf(HttpResponse<String> response, String what) {
        String contentType = response.headers().firstValue("Content-Type").orElse("");
        if (contentType.startsWith(Problem.MEDIA_TYPE) || contentType.startsWith("application/json")) {
            try {
                Problem p = Json.MAPPER.readValue(response.body(), Problem.class);
                if (p.type() != null) {
                    return p.status() == 0 ? p.withStatus(response.statusCode()) : p;
                }
            } catch (JsonProcessingException ignored) {
                // fall through: not a problem document
            }
        }
        String body = response.body() == null ? "" : response.body();
        return new Problem(ProblemTypes.INTERNAL, "Unexpected answer", response.statusCode(),
                what + " answered " + response.statusCode() + " without problem+json: "
                        + body.substring(0, Math.min(body.length(), 200)), null);
    }

    static String segment(String value) {
        return URLEncoder.encode(Objects.requireNonNull(value, "path segment"), StandardCharsets.UTF_8)
                .replace("+", "%20");
    }
}
