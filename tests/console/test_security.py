"""Console security: staff only, CSRF on every form, a CSP without inline script or style,
no framing, and session cookie flags."""

import re

import pytest
from django.test import Client

from tests.console.conftest import STAFF_PASSWORD

pytestmark = pytest.mark.django_db

PAGES = [
    "/console/",
    "/console/runs/",
    "/console/apps/business/runs/",
    "/console/apps/business/debug/",
]


@pytest.fixture
def run(researcher, make_run):
    return make_run()


def all_pages(run) -> list[str]:
    return [*PAGES, f"/console/runs/{run.pk}/", "/console/login/"]


@pytest.mark.parametrize("url", PAGES)
def test_console_pages_send_anonymous_visitors_to_the_login(client, app, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/console/login/")


def test_a_business_user_cannot_sign_in_to_the_console(client, alice):
    alice.set_password("alice-password-1")
    alice.save()
    response = client.post("/console/login/", {"username": "alice", "password": "alice-password-1"})
    assert response.status_code == 200  # the form again, with an error
    assert "_auth_user_id" not in client.session


def test_a_run_detail_of_any_tenant_is_open_to_staff_only(client, staff_client, run, alice):
    client.force_login(alice)
    assert client.get(f"/console/runs/{run.pk}/").status_code == 302
    assert staff_client.get(f"/console/runs/{run.pk}/").status_code == 200
    assert staff_client.get("/console/runs/run_doesnotexist/").status_code == 404


def test_console_pages_carry_csp_frame_and_nosniff_headers(staff_client, run):
    for url in all_pages(run):
        response = staff_client.get(url)
        assert response.status_code == 200, url
        csp = response["Content-Security-Policy"]
        directives = dict(d.strip().split(" ", 1) for d in csp.split(";") if d.strip())
        assert directives["script-src"] == "'self'", url
        assert directives["style-src"] == "'self'", url
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert directives["frame-ancestors"] == "'none'"
        assert response["X-Frame-Options"] == "DENY"
        assert response["X-Content-Type-Options"] == "nosniff"


def test_pages_with_run_data_are_not_cached(staff_client, run):
    for url in [f"/console/runs/{run.pk}/", "/console/apps/business/debug/"]:
        assert "no-store" in staff_client.get(url)["Cache-Control"]


def test_console_html_has_no_inline_script_or_style(staff_client, run):
    """Every script is a file (or a non-executable JSON data block); no style= anywhere."""
    for url in all_pages(run):
        html = staff_client.get(url).content.decode()
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert 'src="/static/' in tag or 'type="application/json"' in tag, (url, tag)
        assert not re.search(r"\sstyle\s*=", html), url
        assert "<style" not in html, url
        assert not re.search(r"\son[a-z]+\s*=", html), url  # no inline event handlers


def test_the_login_sets_an_httponly_samesite_secure_session_cookie(client, admin_user):
    response = client.post("/console/login/", {"username": "root", "password": STAFF_PASSWORD})
    assert response.status_code == 302
    cookie = response.cookies["sessionid"]
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert cookie["secure"] is True  # DEBUG is off in tests, as in production


def test_the_login_form_requires_csrf(admin_user):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/console/login/", {"username": "root", "password": STAFF_PASSWORD})
    assert response.status_code == 403


def test_trying_a_version_requires_csrf(admin_user, researcher, alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    data = {
        "agent": "researcher",
        "version": researcher.pk,
        "token": alice.raw_token,
        "input": "营收？",
    }
    assert client.post("/console/apps/business/debug/runs", data).status_code == 403
    client.get("/console/apps/business/debug/")
    token = client.cookies["csrftoken"].value
    response = client.post("/console/apps/business/debug/runs", data, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 201


def test_logout_and_language_switch_are_posts_with_csrf(staff_client):
    html = staff_client.get("/console/").content.decode()
    for action in ("/console/logout/", "/i18n/setlang/"):
        form = re.search(rf'<form[^>]*action="{re.escape(action)}"[^>]*>(.*?)</form>', html, re.S)
        assert form and 'method="post"' in form.group(0)
        assert 'name="csrfmiddlewaretoken"' in form.group(1)


def test_the_debug_page_never_contains_a_token_nor_its_prefix(staff_client, researcher, alice, bob):
    html = staff_client.get("/console/apps/business/debug/").content.decode()
    assert alice.raw_token not in html and bob.raw_token not in html
    # Whose token was pasted is decided by the server, never matched in the page.
    assert alice.raw_token[:10] not in html and bob.raw_token[:10] not in html
