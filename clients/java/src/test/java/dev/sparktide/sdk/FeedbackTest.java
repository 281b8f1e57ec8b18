package dev.sparktide.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** sendFeedback and listFeedback against the live SparkTide, on a run of their own. */
class FeedbackTest {
    private final String runId = Env.get("SPARKTIDE_FEEDBACK_RUN_ID");
    private final String blockId = Env.get("SPARKTIDE_FEEDBACK_BLOCK_ID");

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

    @Test
    void theOwnerRatesTheRunAndABlockAndASecondRatingReplacesTheFirst() throws Exception {
        SparkTideClient client = clientOf("SPARKTIDE_TOKEN");
        Map<String, Object> given = await(client.sendFeedback(runId, "up", "引用准确", null));
        assertEquals("up", given.get("rating"));
        assertEquals("引用准确", given.get("note"));
        assertNull(given.get("block"));
        await(client.sendFeedback(runId, "down", "第一段数字不对", blockId));
        await(client.sendFeedback(runId, "down", null, null)); // replaces the run's own

        List<String> seen = new ArrayList<>();
        for (Map<String, Object> item : listOf(await(client.listFeedback(runId)).get("feedback"))) {
            seen.add(item.get("block") + " " + item.get("rating") + " " + item.get("note"));
        }
        seen.sort(null);
        List<String> expected = new ArrayList<>(List.of("null down ", blockId + " down 第一段数字不对"));
        expected.sort(null);
        assertEquals(expected, seen);
    }

    @Test
    void aRatingThatIsNeitherUpNorDownIsInvalidRequestNamingTheField() {
        SparkTideException error =
                refused(clientOf("SPARKTIDE_TOKEN").sendFeedback(runId, "meh", null, null), "INVALID_REQUEST", 400);
        String detail = (String) error.problem().get("detail");
        assertTrue(detail.startsWith("rating"), detail);
    }

    @Test
    void anotherMemberCanNeitherRateNorReadTheOwnersRun() {
        SparkTideClient other = clientOf("SPARKTIDE_OTHER_TOKEN");
        refused(other.sendFeedback(runId, "down", "x", null), "RESOURCE_NOT_FOUND", 404);
        refused(other.listFeedback(runId), "RESOURCE_NOT_FOUND", 404);
    }
}
