"""The browser SDK as an npm package (@sparktide/frontend-sdk), and the guide's example page
(docs/sdk.md, kept verbatim in tests/clients/sdk_example.html) running in Debian's Chromium
against a live daphne: ChatSession, answerSegments, the React hook and the Vue 3 composable,
previewCitation with an AbortController."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.db import connections

from tests import factories
from tests.clients.conftest import start_live_server, verified_citations, wait_for_terminal

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "static" / "sparktide"
EXAMPLE = Path(__file__).with_name("sdk_example.html")
GUIDE = ROOT / "docs" / "sdk.md"
CHROMIUM = os.environ.get("SPARKTIDE_CHROMIUM", "/usr/bin/chromium")
REACT_UMD = Path("/usr/share/nodejs/react/umd/react.production.min.js")
REACT_DOM_UMD = Path("/usr/share/nodejs/react-dom/umd/react-dom.production.min.js")
# Vue 3 is not in Debian: scripts/ensure-sdk-tools installs it with npm (one exact version).
VUE_GLOBAL = ROOT / "var" / "sdk-tools" / "node_modules" / "vue" / "dist" / "vue.global.prod.js"
FORGED_ID = "cite_" + "q" * 24

ANSWER_STEPS = (
    # One search per excerpt: c1 and c2 are the report's two pages whatever the ranking does.
    {"search": "营收增长", "topK": 1},
    {"search": "毛利率 现金流", "topK": 1},
    {"answerPart": "北辰医药三季度营收增长 12% [[cite:{{c1}}]]。"},
    {"sleep": 0.3},
    {
        "answerPart": f"<b>传闻</b> [[cite:{FORGED_ID}]] 与 [链接](https://example.com) 不是来源。",
    },
    {"answerPart": "研发投入同比增加 [[cite:{{c2}}]]。"},
)


def run(args: list[str], cwd: Path, env: dict | None = None, timeout: float = 120):
    result = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env or os.environ
    )
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


# --- the npm package ---------------------------------------------------------------------


@pytest.fixture
def npm_env(tmp_path) -> dict:
    npm = shutil.which("npm")
    factories.require(npm is not None, "npm is needed to install the browser SDK package")
    return {
        **os.environ,
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "npm_config_update_notifier": "false",
        "npm_config_audit": "false",
        "npm_config_fund": "false",
    }


def test_the_package_holds_exactly_the_modules_and_their_declarations(npm_env, tmp_path):
    packed = json.loads(run(["npm", "pack", "--dry-run", "--json", str(SDK)], tmp_path, npm_env))
    files = sorted(entry["path"] for entry in packed[0]["files"])
    modules = sorted(p.name for p in SDK.glob("*.js"))
    declarations = sorted(p.name for p in SDK.glob("*.d.ts"))
    assert files == sorted(["package.json", *modules, *declarations])
    assert {m.removesuffix(".js") for m in modules} == {
        d.removesuffix(".d.ts") for d in declarations
    }
    assert packed[0]["name"] == "@sparktide/frontend-sdk"


def test_npm_installs_the_package_offline_and_node_imports_it(npm_env, tmp_path):
    tarball_dir = tmp_path / "dist"
    tarball_dir.mkdir()
    run(["npm", "pack", str(SDK), "--pack-destination", str(tarball_dir)], tmp_path, npm_env)
    (tarball,) = tarball_dir.glob("sparktide-frontend-sdk-*.tgz")
    app = tmp_path / "business-app"
    app.mkdir()
    (app / "package.json").write_text(json.dumps({"name": "business-app", "private": True}))
    run(["npm", "install", "--offline", "--no-save", str(tarball)], app, npm_env)
    installed = app / "node_modules" / "@sparktide" / "frontend-sdk"
    assert (installed / "index.d.ts").exists()

    (app / "check.mjs").write_text(
        """
import * as sdk from "@sparktide/frontend-sdk";
import { useChatSession } from "@sparktide/frontend-sdk/react.js";
let fetched = 0;
const client = new sdk.SparkTideClient({ appId: "research-desk", token: "st_x",
  fetch: async () => { fetched += 1; throw new Error("no request expected"); } });
let refused = null;
try { await client.previewCitation("run_1", "https://example.com/doc"); } catch (e) { refused = e; }
console.log(JSON.stringify({
  exports: Object.keys(sdk).sort(),
  react: typeof useChatSession,
  refused: [refused?.name, refused?.code, refused?.status],
  fetched,
}));
"""
    )
    result = json.loads(run(["node", "check.mjs"], app, npm_env))
    assert result["refused"] == ["SparkTideError", "CITATION_NOT_AVAILABLE", 0]
    assert result["fetched"] == 0 and result["react"] == "function"
    declared = set(re.findall(r"\b(\w+)(?: as (\w+))?\b", (SDK / "index.d.ts").read_text()))
    declared_names = {alias or name for name, alias in declared}
    for name in result["exports"]:
        assert name in declared_names, f"{name} is exported but has no declaration"


def test_the_declarations_type_check_a_typescript_consumer(npm_env, tmp_path):
    tsc = shutil.which("tsc")
    factories.require(tsc is not None, "tsc (Debian node-typescript) checks the declarations")
    app = tmp_path / "ts-app"
    app.mkdir()
    (app / "package.json").write_text(
        json.dumps({"name": "ts-app", "private": True, "type": "module"})
    )
    run(["npm", "install", "--offline", "--no-save", str(SDK)], app, npm_env)
    (app / "consumer.ts").write_text(
        """
import {
  SparkTideClient, ChatSession, answerSegments, isCitationId, SparkTideError,
  type CitationPreview, type Snapshot, type Segment,
} from "@sparktide/frontend-sdk";
import { useChatSession } from "@sparktide/frontend-sdk/react.js";
import { useChatSession as useVue } from "@sparktide/frontend-sdk/vue.js";

const client = new SparkTideClient({ appId: "research-desk", token: () => "st_x" });
const controller = new AbortController();
const preview: Promise<CitationPreview> = client.previewCitation("run_1", "cite_x", { signal: controller.signal });
preview.then((p) => p.content.toUpperCase()).catch((e: unknown) => e instanceof SparkTideError && e.code);
const session = new ChatSession(client);
const state: Snapshot = session.getSnapshot();
for (const block of state.blocks) {
  const segments: readonly Segment[] | null = session.segmentsFor(block);
  segments?.forEach((s) => (s.type === "citation" ? s.id : s.text));
}
answerSegments("x", state.rootAgentCallId, state.citationChecks, state.citations);
const ok: boolean = isCitationId("cite_x");
useChatSession(session, { useSyncExternalStore: (_s, get) => get() }).status;
useVue(session, { shallowRef: (value) => ({ value }) }).value.blocks;
// @ts-expect-error appId is required
new SparkTideClient({});
// @ts-expect-error a preview takes a run ID and a citation ID
client.previewCitation("run_1");
export { ok };
"""
    )
    run(
        [
            tsc,
            "--noEmit",
            "--strict",
            "--target",
            "es2022",
            "--module",
            "node16",
            "--moduleResolution",
            "node16",
            "--lib",
            "es2022,dom",
            "consumer.ts",
        ],
        app,
        npm_env,
    )


# --- the guide's example page in Chromium ----------------------------------------------


def test_the_guide_shows_the_example_page_verbatim():
    guide = GUIDE.read_text()
    match = re.search(r"```html\n(<!doctype html>.*?</html>\n)```", guide, re.S)
    assert match, "docs/sdk.md has no complete example page"
    assert match.group(1) == EXAMPLE.read_text()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_example_page_asks_shows_verified_sources_and_previews_them_in_chromium(
    tenant, alice, monkeypatch
):
    from playwright.sync_api import sync_playwright

    # The ORM calls between browser steps are plain synchronous code; Django would refuse
    # them while Playwright's event loop runs in this thread.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    for path in (REACT_UMD, REACT_DOM_UMD):
        factories.require(path.exists(), f"{path} (Debian node-react, node-react-dom)")
    factories.require(VUE_GLOBAL.exists(), f"{VUE_GLOBAL} (scripts/ensure-sdk-tools)")
    factories.require(Path(CHROMIUM).exists(), f"Chromium at {CHROMIUM}")
    desk = factories.make_app(tenant, "research-desk", members=[alice])
    knowledge = factories.fund_reports(tenant, desk, alice)
    factories.make_agent(
        tenant,
        "researcher",
        model=factories.scripted(*ANSWER_STEPS),
        knowledge=[knowledge],
        pin_to=[desk],
    )
    server = start_live_server()
    previews: list[str] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM,
                # The page is handed over by Playwright (no server address), so Chromium would
                # treat its socket to 127.0.0.1 as a public page reaching the local network.
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-features=LocalNetworkAccessChecks",
                ],
                headless=True,
            )
            context = browser.new_context(base_url=server.url, locale="zh-CN")
            context.set_default_timeout(20_000)
            page = context.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on(
                "request",
                lambda request: previews.append(request.url) if "/preview" in request.url else None,
            )
            # The business app's own server: the page, its React, and the user's token.
            page.route(
                f"{server.url}/app/example.html",
                lambda route: route.fulfill(
                    body=EXAMPLE.read_text(), content_type="text/html; charset=utf-8"
                ),
            )
            for path in (REACT_UMD, REACT_DOM_UMD, VUE_GLOBAL):
                page.route(f"{server.url}/vendor/{path.name}", serve_file(path))
            page.route(
                f"{server.url}/app/sparktide-token",
                lambda route: route.fulfill(body=alice.raw_token, content_type="text/plain"),
            )

            page.goto("/app/example.html")
            page.click("#ask button[type=submit]")
            page.wait_for_selector("#answer section[data-status=completed]")
            assert page.text_content("#status") == "completed"
            run_id = latest_run_id(desk)
            wait_for_terminal(run_id)
            answer = page.text_content("#answer")
            assert "北辰医药三季度营收增长 12%" in answer
            # A forged ID, markup and a Markdown link stay literal text; nothing became HTML.
            assert f"<b>传闻</b> [[cite:{FORGED_ID}]] 与 [链接](https://example.com)" in answer
            assert page.locator("#answer b").count() == 0
            assert page.locator("#answer a").count() == 0
            buttons = page.locator("#answer button.cite")
            assert buttons.count() == len(verified_citations(run_id)) == 2
            # Vue 3's rendering through useVueChatSession: the same answer, text kept as text.
            page.wait_for_selector("#vue-answer section[data-status=completed]")
            vue_answer = page.text_content("#vue-answer")
            assert "北辰医药三季度营收增长 12%" in vue_answer
            assert f"<b>传闻</b> [[cite:{FORGED_ID}]] 与 [链接](https://example.com)" in vue_answer
            assert page.locator("#vue-answer b").count() == 0
            assert page.locator("#vue-answer a").count() == 0
            vue_buttons = page.locator("#vue-answer button.cite")
            assert vue_buttons.count() == 2

            buttons.first.click()
            page.wait_for_function(
                "() => document.getElementById('source-text').textContent.length > 0"
            )
            assert page.locator("#source").evaluate("d => d.open")
            assert "营收增长12%" in page.text_content("#source-text")
            assert page.text_content("#source-title") == "北辰医药 2026 年三季度报告"
            page.click("#source-close")
            # The excerpt is dropped on close (the dialog's close event is queued as a task).
            page.wait_for_function("() => !document.getElementById('source').open")
            page.wait_for_function(
                "() => document.getElementById('source-text').textContent === ''", timeout=2_000
            )
            buttons.first.click()  # asked again, re-authorized again: no cache
            page.wait_for_function(
                "() => document.getElementById('source-text').textContent.length > 0"
            )
            assert len(previews) == 2
            page.click("#source-close")
            vue_buttons.last.click()  # a preview opened from the Vue rendering
            page.wait_for_function(
                "() => document.getElementById('source-text').textContent.length > 0"
            )
            assert page.text_content("#source-title") == "北辰医药 2026 年三季度报告"
            assert len(previews) == 3
            assert f"/citations/{verified_citations(run_id)[1]}/preview" in previews[-1]

            # A preview that is refused shows the code's message, never an old excerpt.
            from tenancy.models import App

            App.objects.filter(pk=desk.pk).update(security_policy_epoch=99)
            page.click("#source-close")
            buttons.last.click()
            page.wait_for_function(
                "() => document.getElementById('source-error').textContent.length > 0"
            )
            assert page.text_content("#source-error") == "应用的权限配置已变化，请开始新的会话。"
            assert page.text_content("#source-text") == ""

            # Closing while a preview is in flight aborts it: nothing is shown afterwards.
            page.click("#source-close")
            page.route("**/preview", lambda route: None)  # hold the request: it never answers
            buttons.first.click()
            page.wait_for_timeout(200)
            page.click("#source-close")
            page.wait_for_timeout(200)
            assert page.text_content("#source-error") == ""
            assert page.text_content("#source-text") == ""
            assert page.evaluate("() => document.getElementById('source').open") is False
            # Unmounting the Vue component unsubscribes its composable; the session lives on.
            listening = "() => window.exampleSession._listeners.size"
            before = page.evaluate(listening)
            page.evaluate("() => window.unmountVueAnswer()")
            assert page.evaluate(listening) == before - 1
            assert page.locator("#vue-answer section").count() == 0
            assert not problems, problems
            context.close()
            browser.close()
            # The ORM calls above ran inside Playwright's greenlet, on connections of their
            # own context: close them here, or the test database cannot be dropped at the end.
            connections.close_all()
    finally:
        server.process.stop(timeout=3)


def serve_file(path: Path):
    return lambda route: route.fulfill(path=str(path), content_type="text/javascript")


def latest_run_id(app) -> str:
    from runs.models import Run

    return Run.objects.filter(app=app).order_by("-created_at").values_list("pk", flat=True)[0]
