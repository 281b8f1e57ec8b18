"""Short-lived, single-use tickets that let a browser open a run's WebSocket
without putting a long-lived bearer token in a URL."""

import secrets
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from runs.models import EventTicket, Run
from sparktide.tenancy.models import hash_token


def issue_ticket(*, run: Run, user) -> tuple[str, EventTicket]:
    raw = "wst_" + secrets.token_urlsafe(32)
    ticket = EventTicket.objects.create(
        run=run,
        user=user,
        digest=hash_token(raw),
        expires_at=timezone.now() + timedelta(seconds=settings.SPARKTIDE_WS_TICKET_TTL),
    )
    return raw, ticket


def redeem_ticket(raw: str, *, run_id: str):
    """Use a ticket once: returns its user, or None if unknown, used, expired or for another run."""
    now = timezone.now()
    used = EventTicket.objects.filter(
        digest=hash_token(raw), run_id=run_id, used_at__isnull=True, expires_at__gt=now
    ).update(used_at=now)
    if used != 1:
        return None
    return EventTicket.objects.select_related("user").get(digest=hash_token(raw)).user
