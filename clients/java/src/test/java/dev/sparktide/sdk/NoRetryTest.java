package dev.sparktide.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** Against real local servers that count requests; the test command asserts the counts. */
class NoRetryTest {
    private static final String FORGED = "cite_" + "z".repeat(24);

    @Test
    void a503FailsOnceWithTheProblemAndIsNotRetried() {
        SparkTideClient client = new SparkTideClient(Env.uri("SPARKTIDE_COUNTING_URL"), "business", "st_token");
        SparkTideException error = assertInstanceOf(SparkTideException.class,
                Env.failure(client.previewCitation("run_x", FORGED)));
        assertEquals("KNOWLEDGE_SOURCE_UNAVAILABLE", error.code());
        assertEquals(503, error.status());
        assertEquals("KNOWLEDGE_SOURCE_UNAVAILABLE", error.problem().get("code"));
    }

    @Test
    void aCallPastItsTimeoutFailsWithTimeout() {
        SparkTideClient client =
                new SparkTideClient(Env.uri("SPARKTIDE_SLOW_URL"), "business", "st_token", Duration.ofMillis(300));
        long started = System.nanoTime();
        SparkTideException error = assertInstanceOf(SparkTideException.class,
                Env.failure(client.previewCitation("run_timeout", FORGED)));
        assertEquals("TIMEOUT", error.code());
        assertEquals(0, error.status());
        assertTrue(System.nanoTime() - started < 1_500_000_000L, "the timeout was not honoured");
    }

    @Test
    void cancellingTheStageAbandonsTheCall() throws Exception {
        SparkTideClient client = new SparkTideClient(Env.uri("SPARKTIDE_SLOW_URL"), "business", "st_token");
        CompletableFuture<Map<String, Object>> call =
                client.previewCitation("run_cancel", FORGED).toCompletableFuture();
        Thread.sleep(300); // the request is at the server now
        assertTrue(call.cancel(true));
        assertTrue(call.isCancelled());
        try {
            call.join();
            throw new AssertionError("a cancelled call completed");
        } catch (CancellationException expected) {
            // the caller's cancellation, untouched
        } catch (CompletionException other) {
            throw new AssertionError("the call failed instead of being cancelled: " + other.getCause(), other);
        }
    }
}
