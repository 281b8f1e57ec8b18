"""Deployment security: HTTPS settings on by default outside DEBUG and off in
development, a revoked token's unused WebSocket tickets refused, and an idle
socket's Redis read timeout handled as the expected condition it is."""

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from redis.exceptions import TimeoutError as RedisTimeoutError

from delivery.shared import RunWakeups
from delivery.tickets import redeem_ticket
from tenancy.models import ApiToken, hash_token
from tests import factories

ROOT = Path(__file__).resolve().parents[2]
FROM_ENV = ("DEBUG", "SECRET_KEY", "SECURE_", "DATABASE_URL", "REDIS_URL", "DJANGO_")

PRINT_SECURITY = (
    "from django.conf import settings as s; import json; print(json.dumps("
    "[s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SECURE_PROXY_SSL_HEADER]))"
)


def _security_settings(env: dict, tmp_path) -> list:
    full = {k: v for k, v in os.environ.items() if not k.startswith(FROM_ENV)}
    full.update(env, SPARKTIDE_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="sparktide.settings")
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()\n" + PRINT_SECURITY],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"SECRET_KEY": "k" * 40}, [True, 31_536_000, ["HTTP_X_FORWARDED_PROTO", "https"]]),
        ({"DEBUG": "1"}, [False, 0, None]),
        (
            {
                "SECRET_KEY": "k" * 40,
                "SECURE_SSL_REDIRECT": "0",
                "SECURE_HSTS_SECONDS": "0",
                "SECURE_PROXY_SSL_HEADER": "0",
            },
            [False, 0, None],
        ),
        (
            {"SECRET_KEY": "k" * 40, "SECURE_HSTS_SECONDS": "600"},
            [True, 600, ["HTTP_X_FORWARDED_PROTO", "https"]],
        ),
    ],
    ids=["production-defaults", "development", "plain-http-on-purpose", "short-hsts"],
)
def test_https_settings_are_on_outside_debug_and_each_can_be_set_from_the_environment(
    env, expected, tmp_path
):
    assert _security_settings(env, tmp_path) == expected


@pytest.mark.django_db
def test_a_request_over_http_behind_the_proxy_is_redirected_and_https_gets_hsts(settings, alice):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31_536_000
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    client = factories.client_for(alice)

    plain = client.get("/v1/schema", HTTP_X_FORWARDED_PROTO="http")
    secure = client.get("/v1/schema", HTTP_X_FORWARDED_PROTO="https")

    assert plain.status_code == 301
    assert plain["Location"].startswith("https://")
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=31536000"


@pytest.mark.django_db
def test_revoking_a_token_refuses_the_unused_tickets_it_was_used_to_issue(app, alice):
    run = factories.scripted_run(app, alice, [{"text": "hi"}])
    client = factories.client_for(alice)
    url = f"/v1/apps/{app.slug}/runs/{run.pk}/events/ticket"
    kept, voided = (client.post(url).json()["ticket"] for _ in range(2))
    assert redeem_ticket(kept, run_id=run.pk) == alice  # used before the revocation

    ApiToken.objects.get(digest=hash_token(alice.raw_token)).revoke()

    assert redeem_ticket(voided, run_id=run.pk) is None


@pytest.mark.django_db
def test_a_ticket_from_another_token_of_the_same_user_survives_the_revocation(app, alice):
    run = factories.scripted_run(app, alice, [{"text": "hi"}])
    _, second = ApiToken.issue(alice)
    url = f"/v1/apps/{app.slug}/runs/{run.pk}/events/ticket"
    ticket = factories.client_for(token=second).post(url).json()["ticket"]

    ApiToken.objects.get(digest=hash_token(alice.raw_token)).revoke()

    assert redeem_ticket(ticket, run_id=run.pk) == alice


def test_an_idle_sockets_redis_read_timeout_logs_no_traceback_and_keeps_listening(caplog):
    """The layer's receive timing out on an idle run's subscription is expected: no
    traceback, no warning, and the next wake-up still reaches the run's sockets."""
    outcomes = [RedisTimeoutError("Timeout reading from socket"), TimeoutError()]
    woken: list[dict] = []

    class Layer:
        async def new_channel(self):
            return "process-channel"

        async def group_add(self, group, channel):
            pass

        async def group_discard(self, group, channel):
            pass

        async def receive(self, channel):
            if outcomes:
                raise outcomes.pop(0)
            if woken:  # the wake-up was handed over: an idle run waits from here on
                await asyncio.get_running_loop().create_future()
            return {"type": "run.wakeup", "seq": 7}

    class Socket:
        def wake_up(self, message):
            woken.append(message)

    async def listen_until_woken():
        wakeups, socket, layer = RunWakeups("run_idle"), Socket(), Layer()
        assert await wakeups.join(socket, layer, retry_seconds=0.01)
        while not woken:
            await asyncio.sleep(0.01)
        await wakeups.leave(socket, layer)

    with caplog.at_level(logging.DEBUG, logger="delivery.shared"):
        asyncio.run(asyncio.wait_for(listen_until_woken(), 5))

    assert woken == [{"type": "run.wakeup", "seq": 7}] and not outcomes
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]


@pytest.mark.django_db
def test_a_host_outside_allowed_hosts_is_a_problem_400_and_one_warning_without_a_traceback(
    caplog,
):
    """A scanner's or a misrouted proxy's Host is the client's fault: answered 400, and
    logged as one warning line (so a wrong ALLOWED_HOSTS still shows), never an ERROR."""
    from django.test import Client

    with caplog.at_level(logging.INFO):
        response = Client().get("/v1/apps", headers={"host": '*M",a<@f'})

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "INVALID_REQUEST"
    refused = [r for r in caplog.records if r.name == "django.security.DisallowedHost"]
    assert len(refused) == 1
    assert refused[0].levelno == logging.WARNING and "Invalid HTTP_HOST header" in (
        refused[0].getMessage()
    )
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    # Off /v1 (the console, the admin) it is Django's own 400 page.
    page = Client().get("/console/", headers={"host": '*M",a<@f'})
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")
