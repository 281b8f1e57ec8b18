package dev.sparktide.sdk;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * SparkTide's API for one app, with one business user's bearer token ({@code userClient}: its
 * credentials must be those of the run's current owner), on the JDK's {@code java.net.http}.
 *
 * <p>Every call is made once: no automatic retry, no redirect followed, no cache. Results are
 * plain data ({@code Map}, {@code List}, {@code String}, {@code Long}, {@code Double},
 * {@code Boolean}); a preview's {@code content} is untrusted text. A failed call completes the
 * stage exceptionally with a {@link SparkTideException} carrying {@code code}, {@code status} and
 * the problem body. Cancelling the stage ({@code toCompletableFuture().cancel(true)}) abandons
 * the request.
 */
public final class SparkTideClient {
    static {
        // java.net.http re-sends a request once after a refused connection unless told not to.
        // Read when the HTTP client classes load: set here, before this class first uses them.
        if (System.getProperty("jdk.httpclient.disableRetryConnect") == null) {
            System.setProperty("jdk.httpclient.disableRetryConnect", "true");
        }
    }

    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
    private static final String ACCEPT = "application/json, application/problem+json";

    private final String baseUrl;
    private final String app;
    private final String token;
    private final Duration timeout;
    private final HttpClient http;

    public SparkTideClient(URI baseUrl, String app, String token) {
        this(baseUrl, app, token, DEFAULT_TIMEOUT);
    }

    public SparkTideClient(URI baseUrl, String app, String token, Duration timeout) {
        String base = baseUrl.toString();
        this.baseUrl = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.app = segment(app, "app");
        this.token = token;
        this.timeout = timeout;
        this.http =
                HttpClient.newBuilder()
                        .followRedirects(HttpClient.Redirect.NEVER)
                        .connectTimeout(timeout)
                        .build();
    }

    /**
     * The re-authorized source excerpt of one citation, fetched anew on every call.
     *
     * <p>A {@code citationId} that is not a well-formed {@code cite_} ID (a URI, a Markdown link,
     * a path) completes exceptionally with {@link InvalidCitationIdException} (code
     * CITATION_NOT_AVAILABLE, status 0) and no request is made. Never retried.
     */
    public CompletionStage<Map<String, Object>> previewCitation(String runId, String citationId) {
        if (!CitationIds.isCitationId(citationId)) {
            return CompletableFuture.failedFuture(new InvalidCitationIdException());
        }
        String path;
        try {
            path = runPath(runId) + "/citations/" + segment(citationId, "citationId") + "/preview";
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
        return send(request(path).header("Cache-Control", "no-store").GET());
    }

    /** {@code GET …/runs/{runId}}. */
    public CompletionStage<Map<String, Object>> getRun(String runId) {
        try {
            return send(request(runPath(runId)).GET());
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** {@code POST …/runs} with {@code {agent, input}}. */
    public CompletionStage<Map<String, Object>> createRun(String agent, String input) {
        return createRun(agent, input, null);
    }

    /**
     * {@code POST …/runs} with {@code {agent, input, sessionId}}: the business session the run
     * belongs to ({@code listRuns} filters on it); null sends none.
     */
    public CompletionStage<Map<String, Object>> createRun(String agent, String input, String sessionId) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("agent", agent);
        body.put("input", input);
        if (sessionId != null) body.put("sessionId", sessionId);
        return send(
                request("/v1/apps/" + app + "/runs")
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(Json.write(body))));
    }

    /**
     * {@code GET …/runs}: one page {@code {runs, nextCursor}} of the caller's own runs, newest
     * first. {@code query} holds the documented filters, each optional: {@code status},
     * {@code sessionId}, {@code createdAfter}, {@code createdBefore} (ISO 8601 with an offset),
     * {@code limit}, {@code cursor} (the previous page's {@code nextCursor}). Null means none.
     */
    public CompletionStage<Map<String, Object>> listRuns(Map<String, String> query) {
        return send(request("/v1/apps/" + app + "/runs" + queryString(query)).GET());
    }

    /** {@code GET …/runs/{runId}/answer}: {@code {blocks}}, the committed answer as shown to this caller now. */
    public CompletionStage<Map<String, Object>> answer(String runId) {
        try {
            return send(request(runPath(runId) + "/answer").GET());
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * {@code POST …/runs/{runId}/cancel}: asks the server to cancel (202, an empty map). A run
     * that already ended completes exceptionally with RUN_ALREADY_FINISHED (409).
     */
    public CompletionStage<Map<String, Object>> cancel(String runId) {
        try {
            return send(request(runPath(runId) + "/cancel").POST(HttpRequest.BodyPublishers.noBody()));
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * {@code GET …/runs/{runId}/events?after=…}: one page {@code {events, nextAfter, terminal}} of
     * the events after seq {@code after}. Pass the page's {@code nextAfter} (or the seq of the
     * last event handled) as {@code after} to resume without a gap or a repeat.
     */
    public CompletionStage<Map<String, Object>> events(String runId, long after) {
        return events(runId, after, 0);
    }

    /** {@link #events(String, long)} with a page size ({@code limit} ≤ 0: the server's default). */
    public CompletionStage<Map<String, Object>> events(String runId, long after, int limit) {
        if (after < 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("after must be >= 0"));
        }
        Map<String, String> query = new LinkedHashMap<>();
        query.put("after", Long.toString(after));
        if (limit > 0) query.put("limit", Integer.toString(limit));
        try {
            return send(request(runPath(runId) + "/events" + queryString(query)).GET());
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * {@code POST …/runs/{runId}/events/ticket}: {@code {ticket, expiresAt}}, a single-use ticket
     * for ONE WebSocket connection to {@code /ws/v1/apps/{app}/runs/{runId}/events?after=…&ticket=…}
     * (docs/events.md). Ask for a fresh one for every connection; never retried.
     */
    public CompletionStage<Map<String, Object>> createEventTicket(String runId) {
        try {
            return send(request(runPath(runId) + "/events/ticket").POST(HttpRequest.BodyPublishers.noBody()));
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * {@code PUT …/runs/{runId}/feedback}: the run owner's rating ({@code "up"} or {@code "down"})
     * with an optional note (at most 2000 characters) on the whole run ({@code block} null) or on
     * one of its answer blocks; replaces the owner's earlier feedback on the same target. Completes
     * with {@code {rating, note, block, createdAt, updatedAt}}; bad input fails with
     * INVALID_REQUEST (400) naming the field. {@code note} null sends none.
     */
    public CompletionStage<Map<String, Object>> sendFeedback(
            String runId, String rating, String note, String block) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("rating", rating);
        if (note != null) body.put("note", note);
        if (block != null) body.put("block", block);
        try {
            return send(
                    request(runPath(runId) + "/feedback")
                            .header("Content-Type", "application/json")
                            .PUT(HttpRequest.BodyPublishers.ofString(Json.write(body))));
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** {@code GET …/runs/{runId}/feedback}: {@code {feedback}}, the run's feedback, oldest first. */
    public CompletionStage<Map<String, Object>> listFeedback(String runId) {
        try {
            return send(request(runPath(runId) + "/feedback").GET());
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    // --- internals --------------------------------------------------------------------

    private String runPath(String runId) {
        return "/v1/apps/" + app + "/runs/" + segment(runId, "runId");
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder builder =
                HttpRequest.newBuilder(URI.create(baseUrl + path))
                        .timeout(timeout)
                        .header("Accept", ACCEPT);
        if (token != null && !token.isEmpty()) builder.header("Authorization", "Bearer " + token);
        return builder;
    }

    private CompletionStage<Map<String, Object>> send(HttpRequest.Builder builder) {
        CompletableFuture<HttpResponse<String>> exchange =
                http.sendAsync(builder.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        // A plain future of our own: the JDK's returns a subclass whose cancel() first fails the
        // exchange, so the caller would see a network error instead of its own cancellation.
        CompletableFuture<Map<String, Object>> result = new CompletableFuture<>();
        exchange.whenComplete(
                (response, failure) -> {
                    if (failure != null) {
                        result.completeExceptionally(transportError(failure));
                        return;
                    }
                    try {
                        result.complete(parse(response));
                    } catch (SparkTideException error) {
                        result.completeExceptionally(error);
                    }
                });
        // Cancelling what the caller holds abandons the exchange itself.
        result.whenComplete(
                (value, failure) -> {
                    if (failure instanceof CancellationException) exchange.cancel(true);
                });
        return result;
    }

    private static SparkTideException transportError(Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause instanceof SparkTideException) return (SparkTideException) cause;
        if (cause instanceof HttpTimeoutException) {
            return new SparkTideException("TIMEOUT", 0, String.valueOf(cause.getMessage()), null, cause);
        }
        if (cause instanceof IOException) {
            return new SparkTideException("NETWORK_ERROR", 0, String.valueOf(cause.getMessage()), null, cause);
        }
        return new SparkTideException("NETWORK_ERROR", 0, String.valueOf(cause), null, cause);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> parse(HttpResponse<String> response) {
        int status = response.statusCode();
        String body = response.body();
        Object json = null;
        boolean parsed = false;
        if (body != null && !body.isEmpty()) {
            try {
                json = Json.parse(body);
                parsed = true;
            } catch (IllegalArgumentException notJson) {
                parsed = false;
            }
        }
        if (status >= 200 && status < 300) {
            if (body == null || body.isEmpty()) return Map.of();
            if (!parsed || !(json instanceof Map)) {
                throw new SparkTideException("INVALID_RESPONSE", status, "The body is not a JSON object.", null);
            }
            return (Map<String, Object>) json;
        }
        if (json instanceof Map && ((Map<String, Object>) json).get("code") instanceof String) {
            Map<String, Object> problem = (Map<String, Object>) json;
            Object detail = problem.get("detail");
            throw new SparkTideException(
                    (String) problem.get("code"), status, detail instanceof String ? (String) detail : "", problem);
        }
        throw new SparkTideException("HTTP_ERROR", status, "HTTP " + status, null);
    }

    /** {@code ?k=v&…}, each name and value percent-encoded; "" for no (or only null) values. */
    static String queryString(Map<String, String> query) {
        if (query == null) return "";
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, String> entry : query.entrySet()) {
            if (entry.getValue() == null) continue;
            out.append(out.length() == 0 ? '?' : '&')
                    .append(segment(entry.getKey(), "query name"))
                    .append('=')
                    .append(entry.getValue().isEmpty() ? "" : segment(entry.getValue(), entry.getKey()));
        }
        return out.toString();
    }

    /** One path segment, fully percent-encoded (RFC 3986 unreserved kept): an ID is data. */
    static String segment(String value, String what) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(what + " must be a non-empty string");
        }
        if (value.equals(".") || value.equals("..")) return value.replace(".", "%2E");
        StringBuilder out = new StringBuilder();
        for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            boolean unreserved =
                    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                            || c == '-' || c == '.' || c == '_' || c == '~';
            if (unreserved) out.append(c);
            else out.append('%').append(String.format("%02X", b & 0xff));
        }
        return out.toString();
    }
}
