package dev.sparktide.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** userClient.previewCitation(runId, citationId) against the live SparkTide the test command started. */
class PreviewCitationTest {
    private final String runId = Env.get("SPARKTIDE_RUN_ID");
    private final String citationId = Env.get("SPARKTIDE_CITATION_ID");

    private SparkTideClient clientOf(String tokenVariable) {
        return new SparkTideClient(Env.uri("SPARKTIDE_URL"), "business", Env.get(tokenVariable));
    }

    private static SparkTideException refused(CompletionStage<?> stage, String code, int status) {
        SparkTideException error = assertInstanceOf(SparkTideException.class, Env.failure(stage));
        assertEquals(code, error.code());
        assertEquals(status, error.status());
        assertEquals(code, error.problem().get("code"));
        assertEquals((long) status, error.problem().get("status"));
        return error;
    }

    @Test
    void theOwnerGetsTheExcerptAsPlainDataWithTextContent() throws Exception {
        CompletionStage<Map<String, Object>> stage = clientOf("SPARKTIDE_TOKEN").previewCitation(runId, citationId);
        Map<String, Object> excerpt = stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
        assertEquals(citationId, excerpt.get("id"));
        assertEquals("RETRIEVED_EXCERPT", excerpt.get("scope"));
        String content = assertInstanceOf(String.class, excerpt.get("content"));
        assertTrue(content.contains("营收增长"), content);
        assertInstanceOf(Map.class, excerpt.get("sourceRef"));
    }

    @Test
    void aWellFormedIdThisRunDidNotIssueIsCitationNotAvailable() {
        refused(clientOf("SPARKTIDE_TOKEN").previewCitation(runId, "cite_" + "z".repeat(24)),
                "CITATION_NOT_AVAILABLE", 404);
    }

    @Test
    void anotherMemberGetsResourceNotFound() {
        refused(clientOf("SPARKTIDE_OTHER_TOKEN").previewCitation(runId, citationId), "RESOURCE_NOT_FOUND", 404);
    }

    @Test
    void anUnknownTokenIsAuthenticationRequired() {
        SparkTideClient stranger = new SparkTideClient(Env.uri("SPARKTIDE_URL"), "business", "st_not_a_token");
        refused(stranger.previewCitation(runId, citationId), "AUTHENTICATION_REQUIRED", 401);
    }

    @Test
    void anArchivedRunIsEventCursorExpired() {
        refused(clientOf("SPARKTIDE_TOKEN").previewCitation(Env.get("SPARKTIDE_ARCHIVED_RUN_ID"), citationId),
                "EVENT_CURSOR_EXPIRED", 410);
    }

    @Test
    void aUriIsRefusedBeforeAnyRequestReachesTheServer() {
        for (String uri : new String[] {"https://example.com/report-a", "../../admin", citationId + "/x"}) {
            SparkTideException error = assertInstanceOf(InvalidCitationIdException.class,
                    Env.failure(clientOf("SPARKTIDE_TOKEN").previewCitation(runId, uri)));
            assertEquals("CITATION_NOT_AVAILABLE", error.code());
            assertEquals(0, error.status());
            assertNull(error.problem());
        }
    }

    @Test
    void runsAreCreatedAndReadToo() throws Exception {
        SparkTideClient client = clientOf("SPARKTIDE_TOKEN");
        Map<String, Object> run = client.getRun(runId).toCompletableFuture().get(20, TimeUnit.SECONDS);
        assertEquals("COMPLETED", run.get("status"));
        refused(client.createRun("nobody", "x"), "AGENT_NOT_AVAILABLE", 422);
    }
}
