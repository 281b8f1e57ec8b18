"""The trusted context a retrieval carries: who asks, built by the server."""

from dataclasses import dataclass


@dataclass(frozen=True)
class TrustedContext:
    """Built by the server from the run, never from client input."""

    tenant: str  # tenant key
    app: str  # app slug
    user: str  # owner username
    business_session_id: str
