package dev.sparktide.sdk.kotlin

import dev.sparktide.sdk.SparkTideClient

// Every operation of the Java client as a suspending call, in the style of previewCitationAwait:
// one request, never retried; cancelling the coroutine cancels the request; a failure is thrown
// as the same SparkTideException (code, status, problem).

/** createRun: `POST …/runs` → the Run (`sessionId` null: none). */
suspend fun SparkTideClient.createRunAwait(agent: String, input: String, sessionId: String? = null): Map<String, Any?> =
    createRun(agent, input, sessionId).awaitResult()

/** getRun: `GET …/runs/{runId}` → the Run. */
suspend fun SparkTideClient.getRunAwait(runId: String): Map<String, Any?> = getRun(runId).awaitResult()

/**
 * listRuns: one page `{runs, nextCursor}` of the caller's own runs, newest first. `query` holds
 * the documented filters (status, sessionId, createdAfter, createdBefore, limit, cursor); a null
 * value is no filter.
 */
suspend fun SparkTideClient.listRunsAwait(query: Map<String, String?> = emptyMap()): Map<String, Any?> =
    listRuns(query).awaitResult()

/**
 * listRunEvents: one page `{events, nextAfter, terminal}` after seq `after` (`limit` ≤ 0: the
 * server's default). A negative `after` throws IllegalArgumentException before any request.
 */
suspend fun SparkTideClient.eventsAwait(runId: String, after: Long = 0, limit: Int = 0): Map<String, Any?> =
    events(runId, after, limit).awaitResult()

/** getRunAnswer: `{blocks}`, the committed answer as shown to this caller now. */
suspend fun SparkTideClient.answerAwait(runId: String): Map<String, Any?> = answer(runId).awaitResult()

/** cancelRun: 202, an empty map; an ended run throws RUN_ALREADY_FINISHED (409). */
suspend fun SparkTideClient.cancelAwait(runId: String): Map<String, Any?> = cancel(runId).awaitResult()

/** createEventTicket: `{ticket, expiresAt}` for one WebSocket connection. */
suspend fun SparkTideClient.createEventTicketAwait(runId: String): Map<String, Any?> =
    createEventTicket(runId).awaitResult()

/**
 * putRunFeedback: the owner's "up" / "down" with an optional note on the run, or on its answer
 * block `block`; replaces the earlier one on the same target → `{rating, note, block, createdAt,
 * updatedAt}`. Bad input throws INVALID_REQUEST (400) naming the field.
 */
suspend fun SparkTideClient.sendFeedbackAwait(
    runId: String,
    rating: String,
    note: String? = null,
    block: String? = null
): Map<String, Any?> = sendFeedback(runId, rating, note, block).awaitResult()

/** listRunFeedback: `{feedback}`, the run's feedback, oldest first. */
suspend fun SparkTideClient.listFeedbackAwait(runId: String): Map<String, Any?> = listFeedback(runId).awaitResult()
