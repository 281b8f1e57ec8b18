package dev.sparktide.sdk.kotlin

import dev.sparktide.sdk.InvalidCitationIdException
import dev.sparktide.sdk.SparkTideClient
import dev.sparktide.sdk.SparkTideException
import java.net.URI
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class PreviewCitationAwaitTest {
    private fun env(name: String): String = System.getenv(name) ?: error("$name is not set: run through `make test`")

    private val forged = "cite_" + "z".repeat(24)

    @Test
    fun kotlinAwaitsTheOwnersExcerptAsText() = runBlocking {
        val client = SparkTideClient(URI.create(env("SPARKTIDE_URL")), "business", env("SPARKTIDE_TOKEN"))
        val excerpt = client.previewCitationAwait(env("SPARKTIDE_RUN_ID"), env("SPARKTIDE_CITATION_ID"))
        assertEquals(env("SPARKTIDE_CITATION_ID"), excerpt["id"])
        assertTrue((excerpt["content"] as String).contains("营收增长"))
    }

    @Test
    fun kotlinRaisesTheTypedErrorOfAFailure() = runBlocking {
        val client = SparkTideClient(URI.create(env("SPARKTIDE_URL")), "business", env("SPARKTIDE_TOKEN"))
        val error = try {
            client.previewCitationAwait(env("SPARKTIDE_RUN_ID"), forged)
            null
        } catch (e: SparkTideException) {
            e
        }
        assertEquals("CITATION_NOT_AVAILABLE", error!!.code())
        assertEquals(404, error.status())
    }

    @Test
    fun kotlinRefusesAUriBeforeAnyRequest() {
        val client = SparkTideClient(URI.create(env("SPARKTIDE_COUNTING_URL")), "business", "st_token")
        assertThrows(InvalidCitationIdException::class.java) {
            runBlocking { client.previewCitationAwait("run_x", "https://example.com/doc") }
        }
    }

    @Test
    fun cancellingTheCoroutineCancelsTheCall() = runBlocking {
        val client = SparkTideClient(URI.create(env("SPARKTIDE_SLOW_URL")), "business", "st_token")
        val call = async { client.previewCitationAwait("run_kotlin_cancel", forged) }
        delay(300) // the request is at the server now
        call.cancel()
        val outcome = try {
            call.await()
            "completed"
        } catch (e: CancellationException) {
            "cancelled"
        }
        assertEquals("cancelled", outcome)
        assertTrue(call.isCancelled)
    }
}
