package dev.sparktide.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void parsesObjectsArraysNumbersAndEscapedText() {
        Object value = Json.parse(
                " {\"a\": [1, -2.5e1, true, false, null], \"t\": \"北辰\\u533b\\u836f \\ud83d\\ude00 \\\"q\\\"\\n\"} ");
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("a", java.util.Arrays.asList(1L, -25.0, true, false, null));
        expected.put("t", "北辰医药 😀 \"q\"\n");
        assertEquals(expected, value);
    }

    @Test
    void refusesWhatIsNotJson() {
        for (String bad : List.of("", "{", "[1,]", "{\"a\" 1}", "01", "\"\\x\"", "nul", "{} x", "\"\u0001\"")) {
            assertThrows(IllegalArgumentException.class, () -> Json.parse(bad), bad);
        }
    }

    @Test
    void writesWhatItReads() {
        String text = "{\"agent\":\"researcher\",\"input\":\"营收\\n\\\"如何\\\"\",\"n\":[1,2.5,null,true]}";
        assertEquals(text, Json.write(Json.parse(text)));
    }
}
