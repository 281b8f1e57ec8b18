package dev.sparktide.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** The Java check agrees with the server's grammar on every case of the shared file. */
class CitationIdsTest {
    @SuppressWarnings("unchecked")
    private static Map<String, Object> cases() throws IOException {
        String text = Files.readString(Path.of(Env.get("SPARKTIDE_CONFORMANCE_FILE")), StandardCharsets.UTF_8);
        return (Map<String, Object>) Json.parse(text);
    }

    @SuppressWarnings("unchecked")
    @TestFactory
    List<DynamicTest> theJavaCheckAgreesWithTheServerOnEveryCase() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        Map<String, Object> cases = cases();
        for (Object item : (List<Object>) cases.get("valid")) {
            Map<String, Object> c = (Map<String, Object>) item;
            tests.add(DynamicTest.dynamicTest("accepts: " + c.get("why"),
                    () -> assertTrue(CitationIds.isCitationId(c.get("id")))));
        }
        for (Object item : (List<Object>) cases.get("invalid")) {
            Map<String, Object> c = (Map<String, Object>) item;
            tests.add(DynamicTest.dynamicTest("refuses: " + c.get("why"),
                    () -> assertFalse(CitationIds.isCitationId(c.get("id")))));
        }
        return tests;
    }

    /** Sent to a server that counts requests: the test command asserts it saw none of these. */
    @SuppressWarnings("unchecked")
    @TestFactory
    List<DynamicTest> everyInvalidIdIsRefusedBeforeAnyRequest() throws IOException {
        SparkTideClient client = new SparkTideClient(Env.uri("SPARKTIDE_COUNTING_URL"), "business", "st_token");
        List<DynamicTest> tests = new ArrayList<>();
        for (Object item : (List<Object>) cases().get("invalid")) {
            Map<String, Object> c = (Map<String, Object>) item;
            tests.add(DynamicTest.dynamicTest("no request for: " + c.get("why"), () -> {
                Throwable error = Env.failure(client.previewCitation("run_x", (String) c.get("id")));
                SparkTideException refused = assertInstanceOf(InvalidCitationIdException.class, error);
                assertEquals("CITATION_NOT_AVAILABLE", refused.code());
                assertEquals(0, refused.status());
            }));
        }
        return tests;
    }
}
