"""API tokens: random, stored only as a hash, revocable; the DRF bearer
authentication refuses revoked and unknown tokens and records last use."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.test import APIRequestFactory

from tenancy.authentication import BearerTokenAuthentication
from tenancy.models import ApiToken, hash_token

pytestmark = pytest.mark.django_db


def authenticate(raw: str | None, *, scheme: str = "Bearer"):
    headers = {"HTTP_AUTHORIZATION": f"{scheme} {raw}"} if raw is not None else {}
    request = APIRequestFactory().get("/v1/apps/business/runs/run_x", **headers)
    return BearerTokenAuthentication().authenticate(request)


def test_a_token_is_stored_only_as_a_hash(alice):
    token, raw = ApiToken.issue(alice)
    assert raw.startswith("st_") and len(raw) > 40
    assert token.digest == hash_token(raw) != raw
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM tenancy_apitoken")
        stored = [str(value) for row in cursor.fetchall() for value in row]
    assert not any(raw in value for value in stored)
    assert token.prefix == raw[:10]


def test_issued_tokens_are_random(alice):
    raws = {ApiToken.issue(alice)[1] for _ in range(5)}
    assert len(raws) == 5


def test_a_valid_token_authenticates_its_user(alice):
    """request.user is the token's user; request.auth the token itself (tickets record it)."""
    user, auth = authenticate(alice.raw_token)
    assert user == alice
    assert auth == ApiToken.objects.get(user=alice)


def test_a_revoked_token_is_refused(alice):
    token = ApiToken.objects.get(user=alice)
    token.revoke()
    with pytest.raises(exceptions.AuthenticationFailed):
        authenticate(alice.raw_token)


def test_revoking_one_token_leaves_the_users_other_tokens_working(alice):
    ApiToken.objects.get(user=alice).revoke()
    _, second = ApiToken.issue(alice, name="second")
    assert authenticate(second)[0] == alice


def test_the_token_of_an_inactive_user_is_refused(alice):
    alice.is_active = False
    alice.save()
    with pytest.raises(exceptions.AuthenticationFailed):
        authenticate(alice.raw_token)


def test_an_unknown_token_is_refused(alice):
    with pytest.raises(exceptions.AuthenticationFailed):
        authenticate("st_" + "x" * 43)


def test_a_malformed_header_is_refused(alice):
    with pytest.raises(exceptions.AuthenticationFailed):
        authenticate(alice.raw_token, scheme="Token")
    with pytest.raises(exceptions.AuthenticationFailed):
        authenticate("", scheme="Bearer")


def test_a_request_without_credentials_is_left_to_the_permission_classes(alice):
    assert authenticate(None) is None


def test_authentication_records_the_last_use(alice):
    token = ApiToken.objects.get(user=alice)
    assert token.last_used_at is None
    authenticate(alice.raw_token)
    token.refresh_from_db()
    assert token.last_used_at is not None
    assert timezone.now() - token.last_used_at < timedelta(seconds=30)


def test_last_use_is_refreshed_at_most_once_a_minute(alice, django_assert_num_queries):
    authenticate(alice.raw_token)
    with django_assert_num_queries(1):  # the lookup only, no write
        authenticate(alice.raw_token)
    stale = timezone.now() - timedelta(minutes=5)
    ApiToken.objects.filter(user=alice).update(last_used_at=stale)
    authenticate(alice.raw_token)
    assert ApiToken.objects.get(user=alice).last_used_at > stale
