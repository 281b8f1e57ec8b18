package dev.sparktide.sdk;

import java.util.regex.Pattern;

/**
 * The citation ID grammar as the platform issues it: {@code cite_} and 24 characters of
 * {@code [a-z0-9]}. Its one home is the server's {@code foundation/ids.py}; the shared cases file
 * {@code tests/conformance/citation_ids.json} pins this copy to it ({@code CitationIdsTest}).
 */
public final class CitationIds {
    private static final Pattern CITATION_ID = Pattern.compile("cite_[a-z0-9]{24}");

    private CitationIds() {}

    /** True only for a well-formed platform ID; never for a URI, a Markdown link, a path. */
    public static boolean isCitationId(Object value) {
        return value instanceof String && CITATION_ID.matcher((String) value).matches();
    }
}
