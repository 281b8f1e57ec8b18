package dev.sparktide.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * listRuns, events (resumed from its cursor), answer, cancel and createEventTicket against the
 * live SparkTide.
 */
class RunsAndEventsTest {
    private final String runId = Env.get("SPARKTIDE_RUN_ID");

    private SparkTideClient clientOf(String tokenVariable) {
        return new SparkTideClient(Env.uri("SPARKTIDE_URL"), "business", Env.get(tokenVariable));
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    private static SparkTideException refused(CompletionStage<?> stage, String code, int status) {
        SparkTideException error = assertInstanceOf(SparkTideException.class, Env.failure(stage));
        assertEquals(code, error.code());
        assertEquals(status, error.status());
        assertEquals(code, error.problem().get("code"));
        return error;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> listOf(Object value) {
        return (List<Map<String, Object>>) assertInstanceOf(List.class, value);
    }

    private static List<String> ids(Map<String, Object> page) {
        List<String> ids = new ArrayList<>();
        for (Map<String, Object> run : listOf(page.get("runs"))) ids.add((String) run.get("id"));
        return ids;
    }

    @Test
    void listRunsPagesTheOwnersRunsNewestFirstWithItsFilters() throws Exception {
        SparkTideClient client = clientOf("SPARKTIDE_TOKEN");
        Map<String, String> query = new LinkedHashMap<>();
        query.put("limit", "1");
        Map<String, Object> first = await(client.listRuns(query));
        assertEquals(1, ids(first).size());
        String cursor = assertInstanceOf(String.class, first.get("nextCursor"));
        query.put("cursor", cursor);
        Map<String, Object> second = await(client.listRuns(query));
        assertEquals(1, ids(second).size());
        assertFalse(ids(first).equals(ids(second)), "the second page repeats the first");

        Map<String, String> completed = new LinkedHashMap<>();
        completed.put("status", "COMPLETED");
        completed.put("sessionId", null); // a null value is left out
        List<String> all = ids(await(client.listRuns(completed)));
        assertTrue(all.contains(runId), all.toString());
        assertTrue(ids(await(client.listRuns(null))).contains(runId));

        List<String> others = ids(await(clientOf("SPARKTIDE_OTHER_TOKEN").listRuns(Map.of())));
        assertFalse(others.contains(runId), "another member lists the owner's run");
    }

    @Test
    void aBadFilterIsTheServersValidationError() {
        SparkTideException error = assertInstanceOf(SparkTideException.class,
                Env.failure(clientOf("SPARKTIDE_TOKEN").listRuns(Map.of("status", "SLEEPING"))));
        assertEquals(400, error.status());
        assertEquals(error.code(), error.problem().get("code"));
    }

    @Test
    void eventsResumeFromTheirCursorWithoutAGapOrARepeat() throws Exception {
        SparkTideClient client = clientOf("SPARKTIDE_TOKEN");
        Map<String, Object> whole = await(client.events(runId, 0));
        List<Map<String, Object>> all = listOf(whole.get("events"));
        assertTrue(all.size() >= 4, all.toString());
        assertEquals(Boolean.TRUE, whole.get("terminal"));

        // Page by two, each page resumed from the one before's nextAfter.
        List<Object> seqs = new ArrayList<>();
        long after = 0;
        boolean terminal = false;
        for (int pages = 0; !terminal; pages++) {
            assertTrue(pages < 100, "the pages never ended");
            Map<String, Object> page = await(client.events(runId, after, 2));
            for (Map<String, Object> event : listOf(page.get("events"))) seqs.add(event.get("seq"));
            after = (Long) page.get("nextAfter");
            terminal = Boolean.TRUE.equals(page.get("terminal"));
        }
        List<Object> expected = new ArrayList<>();
        for (Map<String, Object> event : all) expected.add(event.get("seq"));
        assertEquals(expected, seqs);

        // Resumed from the middle: exactly what followed.
        long middle = (Long) all.get(1).get("seq");
        List<Map<String, Object>> rest = listOf(await(client.events(runId, middle)).get("events"));
        assertEquals(all.subList(2, all.size()), rest);
        assertEquals("run.completed", all.get(all.size() - 1).get("type"));
    }

    @Test
    void eventsOfAnotherMembersRunAreResourceNotFound() {
        refused(clientOf("SPARKTIDE_OTHER_TOKEN").events(runId, 0), "RESOURCE_NOT_FOUND", 404);
    }

    @Test
    void aNegativeCursorIsRefusedBeforeAnyRequest() {
        assertInstanceOf(IllegalArgumentException.class,
                Env.failure(clientOf("SPARKTIDE_TOKEN").events(runId, -1)));
    }

    @Test
    void theAnswerIsItsBlocksAsPlainData() throws Exception {
        Map<String, Object> answer = await(clientOf("SPARKTIDE_TOKEN").answer(runId));
        List<Map<String, Object>> blocks = listOf(answer.get("blocks"));
        assertFalse(blocks.isEmpty());
        refused(clientOf("SPARKTIDE_OTHER_TOKEN").answer(runId), "RESOURCE_NOT_FOUND", 404);
    }

    @Test
    void aTicketOpensTheOwnersEventStreamAndIsRefusedToAnotherMember() throws Exception {
        SparkTideClient client = clientOf("SPARKTIDE_TOKEN");
        Map<String, Object> issued = await(client.createEventTicket(runId));
        String ticket = assertInstanceOf(String.class, issued.get("ticket"));
        assertFalse(ticket.isEmpty());
        assertInstanceOf(String.class, issued.get("expiresAt"));

        // The ticket opens the WebSocket of docs/events.md: every event once, in order, to the end.
        List<Map<String, Object>> frames = readStream(ticket);
        List<Object> seqs = new ArrayList<>();
        for (Map<String, Object> frame : frames) seqs.add(frame.get("seq"));
        List<Object> expected = new ArrayList<>();
        for (long seq = 1; seq <= frames.size(); seq++) expected.add(seq);
        assertEquals(expected, seqs);
        assertTrue(frames.size() >= 4, frames.toString());
        assertEquals("run.completed", frames.get(frames.size() - 1).get("type"));

        refused(clientOf("SPARKTIDE_OTHER_TOKEN").createEventTicket(runId), "RESOURCE_NOT_FOUND", 404);
        refused(client.createEventTicket(Env.get("SPARKTIDE_ARCHIVED_RUN_ID")), "EVENT_CURSOR_EXPIRED", 410);
    }

    /** The event frames of one WebSocket connection (the JDK's client), up to the terminal one. */
    @SuppressWarnings("unchecked")
    private List<Map<String, Object>> readStream(String ticket) throws Exception {
        String base = Env.get("SPARKTIDE_URL").replaceFirst("^http", "ws");
        URI uri = URI.create(base + "/ws/v1/apps/business/runs/" + runId + "/events?after=0&ticket=" + ticket);
        List<Map<String, Object>> events = new ArrayList<>();
        CompletableFuture<List<Map<String, Object>>> done = new CompletableFuture<>();
        WebSocket.Listener listener = new WebSocket.Listener() {
            private final StringBuilder text = new StringBuilder();

            @Override
            public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
                text.append(data);
                if (last) {
                    Map<String, Object> frame = (Map<String, Object>) Json.parse(text.toString());
                    text.setLength(0);
                    if ("event".equals(frame.get("kind"))) events.add(frame);
                    if ("run.completed".equals(frame.get("type"))) done.complete(events);
                }
                socket.request(1);
                return null;
            }

            @Override
            public CompletionStage<?> onClose(WebSocket socket, int code, String reason) {
                done.completeExceptionally(new AssertionError("closed " + code + " before the end: " + events));
                return null;
            }

            @Override
            public void onError(WebSocket socket, Throwable error) {
                done.completeExceptionally(error);
            }
        };
        WebSocket socket = HttpClient.newHttpClient().newWebSocketBuilder()
                .buildAsync(uri, listener).get(20, TimeUnit.SECONDS);
        try {
            return done.get(20, TimeUnit.SECONDS);
        } finally {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "done");
        }
    }

    @Test
    void cancellingARunningRunIsAcceptedAndAFinishedOneIsRunAlreadyFinished() throws Exception {
        SparkTideClient client = clientOf("SPARKTIDE_TOKEN");
        Map<String, Object> sleepy = await(client.createRun("sleepy", "慢慢想"));
        String id = (String) sleepy.get("id");
        // A worker starts it at once, or within its poll interval: cancel it while it runs.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        Object status = sleepy.get("status");
        while ("QUEUED".equals(status) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            status = await(client.getRun(id)).get("status");
        }
        assertEquals("RUNNING", status);
        Map<String, Object> accepted = await(client.cancel(id));
        assertTrue(accepted.isEmpty(), accepted.toString());
        assertNull(accepted.get("status"));
        refused(client.cancel(runId), "RUN_ALREADY_FINISHED", 409);
        refused(clientOf("SPARKTIDE_OTHER_TOKEN").cancel(id), "RESOURCE_NOT_FOUND", 404);
    }
}
