package dev.sparktide.sdk.kotlin

import dev.sparktide.sdk.SparkTideClient
import dev.sparktide.sdk.SparkTideException
import java.net.URI
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Every operation's suspending call against the live SparkTide (tests/clients/test_java_client.py). */
class SparkTideAwaitTest {
    private fun env(name: String): String = System.getenv(name) ?: error("$name is not set: run through `make test`")

    private fun clientOf(token: String) = SparkTideClient(URI.create(env("SPARKTIDE_URL")), "business", env(token))

    private val runId get() = env("SPARKTIDE_RUN_ID")

    private suspend fun failure(call: suspend () -> Any?): SparkTideException =
        try {
            call()
            throw AssertionError("the call succeeded")
        } catch (e: SparkTideException) {
            e
        }

    @Suppress("UNCHECKED_CAST")
    private fun list(value: Any?): List<Map<String, Any?>> = value as List<Map<String, Any?>>

    @Test
    fun kotlinCreatesReadsListsAndCancelsARunOfItsSession() = runBlocking {
        val client = clientOf("SPARKTIDE_TOKEN")
        val run = client.createRunAwait("sleepy", "慢慢想", sessionId = "kotlin-await")
        val id = run["id"] as String
        assertEquals(listOf("sleepy", "kotlin-await"), listOf(run["agent"], run["sessionId"]))
        assertEquals(id, client.getRunAwait(id)["id"])
        val listed = list(client.listRunsAwait(mapOf("sessionId" to "kotlin-await", "status" to null))["runs"])
        assertEquals(listOf(id), listed.map { it["id"] })
        assertTrue(client.cancelAwait(id).isEmpty())
        val finished = failure { client.cancelAwait(runId) }
        assertEquals(listOf<Any>("RUN_ALREADY_FINISHED", 409), listOf(finished.code(), finished.status()))
        assertEquals("RUN_ALREADY_FINISHED", finished.problem()["code"])
    }

    @Test
    fun kotlinReadsEventsFromItsCursor() = runBlocking {
        val client = clientOf("SPARKTIDE_TOKEN")
        val whole = client.eventsAwait(runId)
        val all = list(whole["events"])
        assertEquals(true, whole["terminal"])
        val page = client.eventsAwait(runId, after = 2, limit = 1)
        assertEquals(listOf(all[2]), list(page["events"]))
        assertEquals(3L, page["nextAfter"])
        assertEquals(false, page["terminal"])
    }

    @Test
    fun kotlinRefusesANegativeCursorBeforeAnyRequest() {
        val client = clientOf("SPARKTIDE_TOKEN")
        assertThrows(IllegalArgumentException::class.java) { runBlocking { client.eventsAwait(runId, after = -1) } }
    }

    @Test
    fun kotlinReadsTheAnswerAsPlainData() = runBlocking {
        val blocks = list(clientOf("SPARKTIDE_TOKEN").answerAwait(runId)["blocks"])
        assertFalse(blocks.isEmpty())
        @Suppress("UNCHECKED_CAST")
        val content = blocks[0]["content"] as Map<String, Any?>
        assertTrue((content["text"] as String).contains("营收增长"), content.toString())
    }

    @Test
    fun kotlinGetsATicketForTheOwnerAndTheTypedErrorForAnotherMember() = runBlocking {
        val ticket = clientOf("SPARKTIDE_TOKEN").createEventTicketAwait(runId)
        assertTrue((ticket["ticket"] as String).isNotEmpty())
        assertTrue(ticket["expiresAt"] is String)
        val other = failure { clientOf("SPARKTIDE_OTHER_TOKEN").createEventTicketAwait(runId) }
        assertEquals(listOf<Any>("RESOURCE_NOT_FOUND", 404), listOf(other.code(), other.status()))
    }

    @Test
    fun kotlinSendsAndListsFeedbackAndAnotherMemberGetsNotFound() = runBlocking {
        val run = env("SPARKTIDE_KOTLIN_FEEDBACK_RUN_ID")
        val client = clientOf("SPARKTIDE_TOKEN")
        val given = client.sendFeedbackAwait(run, "up", note = "好")
        assertEquals(listOf<Any?>("up", "好", null), listOf(given["rating"], given["note"], given["block"]))
        val listed = list(client.listFeedbackAwait(run)["feedback"])
        assertEquals(listOf<Any?>("up"), listed.map { it["rating"] })
        val other = failure { clientOf("SPARKTIDE_OTHER_TOKEN").sendFeedbackAwait(run, "down") }
        assertEquals(listOf<Any>("RESOURCE_NOT_FOUND", 404), listOf(other.code(), other.status()))
    }
}
