package dev.sparktide.sdk.kotlin

import dev.sparktide.sdk.SparkTideClient
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import java.util.concurrent.ExecutionException
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlinx.coroutines.suspendCancellableCoroutine

/**
 * The Java client's previewCitation as a suspending call. Cancelling the coroutine cancels the
 * request (the stage is cancelled); nothing is retried. A malformed ID throws
 * InvalidCitationIdException before any request, like the Java call.
 */
suspend fun SparkTideClient.previewCitationAwait(runId: String, citationId: String): Map<String, Any?> =
    previewCitation(runId, citationId).awaitResult()

/** Await a CompletionStage, cancelling it when the awaiting coroutine is cancelled. */
suspend fun <T> CompletionStage<T>.awaitResult(): T {
    val future = toCompletableFuture()
    return suspendCancellableCoroutine { continuation ->
        future.whenComplete { value, error ->
            if (error == null) {
                continuation.resume(value)
            } else {
                val cause = if ((error is CompletionException || error is ExecutionException) && error.cause != null) error.cause!! else error
                continuation.resumeWithException(cause)
            }
        }
        continuation.invokeOnCancellation { future.cancel(true) }
    }
}
