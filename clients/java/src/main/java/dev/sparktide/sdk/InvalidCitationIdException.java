package dev.sparktide.sdk;

/** The ID is not a platform {@code cite_} ID: refused before any request was made. */
public final class InvalidCitationIdException extends SparkTideException {
    private static final long serialVersionUID = 1L;

    public InvalidCitationIdException() {
        super(
                "CITATION_NOT_AVAILABLE",
                0,
                "Not a platform citation ID; only cite_ IDs issued by this run can be previewed.",
                null);
    }
}
