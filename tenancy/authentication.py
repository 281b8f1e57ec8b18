from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from tenancy.models import ApiToken, hash_token

# last_used_at is evidence for operators, not a security control: writing it on
# every request would add a write to every read, so it is refreshed at most once a minute.
LAST_USED_GRANULARITY = timedelta(minutes=1)


def authenticate_token(raw: str) -> User | None:
    """Return the active user owning the raw bearer token, or None."""
    token = usable_token(raw)
    return None if token is None else token.user


def usable_token(raw: str) -> ApiToken | None:
    """The unrevoked token of an active user matching ``raw``, or None."""
    token = (
        ApiToken.objects.usable()
        .select_related("user")
        .filter(digest=hash_token(raw), user__is_active=True)
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_GRANULARITY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, raw = header.partition(" ")
        if scheme != self.keyword or not raw.strip():
            raise exceptions.AuthenticationFailed("Malformed Authorization header.")
        token = usable_token(raw.strip())
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        return (token.user, token)  # request.auth is the token (tickets record it)

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="sparktide"'
