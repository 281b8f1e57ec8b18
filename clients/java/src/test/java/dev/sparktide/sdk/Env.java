package dev.sparktide.sdk;

import java.net.URI;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** What the test command (tests/clients/test_java_client.py) hands the JUnit tests. */
final class Env {
    private Env() {}

    static String get(String name) {
        String value = System.getenv(name);
        if (value == null || value.isEmpty()) {
            throw new IllegalStateException(name + " is not set: run these tests through `make test`");
        }
        return value;
    }

    static URI uri(String name) {
        return URI.create(get(name));
    }

    /** The exception a stage completed with (unwrapped), or an AssertionError if it succeeded. */
    static Throwable failure(CompletionStage<?> stage) {
        try {
            stage.toCompletableFuture().get(20, TimeUnit.SECONDS);
        } catch (ExecutionException | CompletionException e) {
            return e.getCause();
        } catch (InterruptedException | TimeoutException e) {
            throw new AssertionError("the call did not complete", e);
        }
        throw new AssertionError("the call succeeded");
    }
}
