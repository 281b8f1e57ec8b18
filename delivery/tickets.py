"""Short-lived, single-use tickets that let a browser open a run's WebSocket
without putting a long-lived bearer token in a URL."""

import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Q
from django.utils import timezone

from runs.models import EventTicket, Run
from tenancy.models import ApiToken, hash_token


def issue_ticket(*, run: Run, user: User, token: ApiToken | None = None) -> tuple[str, EventTicket]:
    """``token``: the ApiToken the request was authenticated with, if any."""
    raw = "wst_" + secrets.token_urlsafe(32)
    ticket = EventTicket.objects.create(
        run=run,
        user=user,
        token=token,
        digest=hash_token(raw),
        expires_at=timezone.now() + timedelta(seconds=settings.SPARKTIDE_WS_TICKET_TTL),
    )
    return raw, ticket


def redeem_ticket(raw: str, *, run_id: str) -> User | None:
    """Use a ticket once: returns its user, or None if unknown, used, expired, for
    another run, or issued with a token revoked since."""
    now = timezone.now()
    used = (
        EventTicket.objects.filter(
            digest=hash_token(raw), run_id=run_id, used_at__isnull=True, expires_at__gt=now
        )
        .filter(Q(token__isnull=True) | Q(token__revoked_at__isnull=True))
        .update(used_at=now)
    )
    if used != 1:
        return None
    return EventTicket.objects.select_related("user").get(digest=hash_token(raw)).user
