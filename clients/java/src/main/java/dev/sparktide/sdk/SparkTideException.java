package dev.sparktide.sdk;

import java.util.Map;

/**
 * The client's one error type. {@code code} is the server's documented code (or one of the
 * client's own: NETWORK_ERROR, TIMEOUT, HTTP_ERROR, INVALID_RESPONSE); {@code status} is the HTTP
 * status, or 0 when no answer came (refused before any request, network failure, timeout);
 * {@code problem} is the {@code application/problem+json} body, or null. Branch on the code.
 */
public class SparkTideException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String code;
    private final int status;
    private final transient Map<String, Object> problem;

    public SparkTideException(String code, int status, String detail, Map<String, Object> problem) {
        this(code, status, detail, problem, null);
    }

    public SparkTideException(
            String code, int status, String detail, Map<String, Object> problem, Throwable cause) {
        super(code + " (" + status + ")" + (detail == null || detail.isEmpty() ? "" : ": " + detail), cause);
        this.code = code;
        this.status = status;
        this.problem = problem;
    }

    public String code() {
        return code;
    }

    public int status() {
        return status;
    }

    /** The problem document the server answered, or null when there was none. */
    public Map<String, Object> problem() {
        return problem;
    }
}
