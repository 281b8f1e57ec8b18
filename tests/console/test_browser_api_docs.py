"""The offline API reference in real Chromium: Swagger UI at /v1/docs and Redoc at
/v1/redoc render the schema with every request to this server (no CDN), under their
Content-Security-Policy (the page fixture fails on any violation or page error)."""

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def same_origin_requests(page, base_url: str) -> list[str]:
    foreign: list[str] = []

    def check(request):
        if not request.url.startswith((base_url, "data:", "blob:")):
            foreign.append(request.url)

    page.on("request", check)
    return foreign


def test_swagger_ui_renders_every_operation_from_local_files(page, live_console):
    foreign = same_origin_requests(page, live_console)
    page.goto("/v1/docs")
    page.wait_for_selector(".opblock-summary-path")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/citations/{citation_id}/preview" in p for p in paths), paths
    assert any(p.endswith("/runs") for p in paths), paths
    page.locator(".opblock-summary-path", has_text="/preview").first.click()
    page.wait_for_selector("text=CITATION_NOT_AVAILABLE")
    assert foreign == []


def test_redoc_renders_the_reference_from_local_files(browser, live_console):
    """Redoc's bundle always adds a "by Redocly" logo from its CDN: the page's CSP blocks
    it (the image hides itself), so nothing but this server is ever contacted."""
    context = browser.new_context(base_url=live_console, locale="zh-CN")
    context.set_default_timeout(30_000)
    page = context.new_page()
    blocked: list[str] = []
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            blocked.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    foreign = same_origin_requests(page, live_console)
    failed: dict[str, str] = {}
    page.on("requestfailed", lambda request: failed.update({request.url: request.failure or ""}))
    try:
        page.goto("/v1/redoc")
        page.get_by_role(
            "heading", name="Re-authorized excerpt of one verified citation"
        ).wait_for()
        assert "createRun" in page.content() or "/v1/apps/{app}/runs" in page.content()
    finally:
        context.close()
    assert errors == []
    # The one foreign URL the bundle names was refused by the browser, never fetched.
    assert foreign in ([], ["https://cdn.redoc.ly/redoc/logo-mini.svg"]), foreign
    assert all(failed.get(url) == "csp" for url in foreign), failed
    assert all("https://cdn.redoc.ly/redoc/logo-mini.svg" in text for text in blocked), blocked
