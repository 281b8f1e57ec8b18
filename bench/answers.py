"""Benchmark: are the answers worth reading? A question set over the demo manifest.

    .venv/bin/python bench/answers.py [--provider extractive|openai|all] [--verbose]

It builds the demo (``demo/manifest.yaml``) in a fresh SQLite database under a temporary
directory — the embedded default ``make demo`` runs — executes one REAL run per question
(engine, retrieval, citation issuance, Publication) as the demo user ``analyst`` in the app
``research-desk``, follow-ups in the same ``sessionId``, and reads every answer the way a
business app does: the answer endpoint and the citation preview endpoint (REST). It prints:

- **figure-citation precision** — of the figures written before a citation marker (every
  number in the text since the previous marker), the share whose value is in the excerpt
  that marker's preview returns (target 100 %);
- **direct-answer hit rate** — in-scope questions whose first block holds the expected
  figure (or phrase) (target ≥ 90 %);
- **cited-page accuracy** — in-scope questions whose first block cites the expected
  document on the expected page;
- **not-found correctness** — out-of-scope questions answered with no VERIFIED source and
  a plain "not found" (target 100 %), and in-scope questions wrongly answered "not found".

With ``SPARKTIDE_BENCH_OPENAI_URL`` (an OpenAI-compatible ``…/v1``; model name in
``SPARKTIDE_BENCH_OPENAI_MODEL``, key in ``SPARKTIDE_BENCH_OPENAI_KEY``) the same set runs
against an ``openai`` agent version too. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The checks have one home, shared with the evaluation runner (docs/evaluation.md).
from evaluation.checks import (  # noqa: E402
    NOT_FOUND_PHRASE,
    cited_ids,
    figures_before_markers,
    holds,
    is_not_found,
    numbers,
)

TOKEN = "st_demo_analyst_token_0001"
APP = "research-desk"

# (session, question, expected: figure | phrase | None (out of scope), document, page)
BEICHEN, BOND, HEALTH, MEMO = (
    "beichen-pharma-2026q3",
    "xinghe-bond-fund-2026q3",
    "xinghe-health-fund-2026q3",
    "internal-memo-2026-10",
)
QUESTIONS: list[tuple[str, str, str | None, str | None, int | None]] = [
    ("", "北辰医药三季度营业收入是多少？", "48.6", BEICHEN, 1),
    ("", "北辰医药三季度归母净利润是多少？", "6.2", BEICHEN, 1),
    ("", "北辰医药营业收入同比增长多少？", "18.4", BEICHEN, 1),
    ("", "北辰医药的研发费用率是多少？", "16.0", BEICHEN, 2),
    ("", "北辰医药第三季度研发费用是多少？", "7.8", BEICHEN, 2),
    ("", "北辰医药创新药板块收入是多少？", "19.4", BEICHEN, 2),
    ("", "北辰医药年初至报告期末累计营业收入是多少？", "139.5", BEICHEN, 1),
    ("", "北辰医药经营活动产生的现金流量净额是多少？", "22.3", BEICHEN, 1),
    ("", "北辰医药扣非净利润是多少？", "5.9", BEICHEN, 1),
    ("", "北辰医药在研项目有多少项？", "64", BEICHEN, 2),
    ("", "北辰替尼海外授权的首付款是多少？", "1.2", BEICHEN, 3),
    ("", "北辰医药海外业务收入占比是多少？", "23", BEICHEN, 3),
    ("", "北辰医药有哪些风险？", "集中带量采购", BEICHEN, 3),
    ("", "星河稳健收益债券基金三季度净值增长率是多少？", "1.12", BOND, 1),
    ("", "星河稳健收益债券基金的组合久期是多少？", "3.6", BOND, 2),
    ("", "星河稳健收益债券基金债券资产占比是多少？", "92.7", BOND, 2),
    ("", "星河稳健收益债券基金报告期末基金份额净值是多少？", "1.2473", BOND, 1),
    ("", "星河稳健收益债券基金的杠杆率是多少？", "118", BOND, 2),
    ("", "星河稳健收益债券基金报告期末基金份额总额是多少？", "86.4", BOND, 1),
    ("", "星河医疗健康混合基金的股票仓位是多少？", "61.2", HEALTH, 1),
    ("", "星河医疗健康混合基金三季度净值增长率是多少？", "7.85", HEALTH, 1),
    ("", "星河医疗健康混合基金前五大重仓股有哪些？", "8.9", HEALTH, 2),
    ("", "星河医疗健康混合基金持有北辰医药的比例是多少？", "8.9", HEALTH, 2),
    ("", "星河医疗健康混合基金报告期末基金资产净值是多少？", "31.8", HEALTH, 1),
    ("", "内部投研纪要中北辰医药的目标仓位上限是多少？", "10", MEMO, 2),
    ("", "北辰替尼四季度排产较三季度增加多少？", "30", MEMO, 1),
    # comparisons: the direct answer names both funds, each figure cited to its own report
    ("", "对比星河稳健收益债券基金和星河医疗健康混合基金的三季度净值增长率", "1.12", BOND, 1),
    ("", "对比星河稳健收益债券基金和星河医疗健康混合基金的三季度净值增长率", "7.85", HEALTH, 1),
    ("", "星河医疗健康混合基金与星河稳健收益债券基金的股票资产占比分别是多少？", "61.2", HEALTH, 1),
    ("", "贵州茅台2025年营业收入是多少？", None, None, None),
    ("", "宁德时代的股票仓位是多少？", None, None, None),
    ("", "北辰医药2024年营业收入是多少？", None, None, None),
    ("", "东岳生物的净利润是多少？", None, None, None),
    ("s1", "北辰医药三季度营业收入是多少？", "48.6", BEICHEN, 1),
    ("s1", "那净利润呢？", "6.2", BEICHEN, 1),
    ("s2", "星河稳健收益债券基金三季度净值增长率是多少？", "1.12", BOND, 1),
    ("s2", "那组合久期呢？", "3.6", BOND, 2),
    ("s3", "星河医疗健康混合基金的股票仓位是多少？", "61.2", HEALTH, 1),
    ("s3", "那净值增长率呢？", "7.85", HEALTH, 1),
]


def setup_django(var_dir: str) -> None:
    os.environ.update(
        {
            "DEBUG": "1",
            "SPARKTIDE_VAR_DIR": var_dir,
            "DATABASE_URL": f"sqlite:///{var_dir}/bench.sqlite3",
            "DJANGO_SETTINGS_MODULE": "sparktide.settings",
            "SPARKTIDE_TASK_BACKEND": "django.tasks.backends.dummy.DummyBackend",
        }
    )
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    import logging

    from django.core.management import call_command

    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per model request otherwise

    call_command("migrate", verbosity=0)
    call_command("apply_manifest", str(ROOT / "demo" / "manifest.yaml"), verbosity=0)


def add_openai_agent(url: str) -> str:
    from agents.models import Agent, AgentPin, AgentVersion
    from knowledge.models import KnowledgeVersion
    from tenancy.models import App

    app = App.objects.get(slug=APP)
    agent = Agent.objects.create(tenant=app.tenant, key="researcher-openai", name="openai")
    os.environ.setdefault("SPARKTIDE_BENCH_OPENAI_KEY", "unused")
    version = AgentVersion.objects.create(
        agent=agent,
        version="1",
        instructions=AgentVersion.objects.get(agent__key="researcher").instructions
        + " 先用 search_knowledge 检索，再用 send_answer_part 回答：第一段直接回答问题，"
        "每个数字后面紧跟陈述它的摘录的 [[cite:…]]。找不到就直说，不要引用。",
        model={
            "provider": "openai",
            "baseUrl": url,
            "model": os.environ.get("SPARKTIDE_BENCH_OPENAI_MODEL", "default"),
            "apiKeyEnv": "SPARKTIDE_BENCH_OPENAI_KEY",
        },
        max_steps=8,
    )
    version.allowed_knowledge.set(
        KnowledgeVersion.objects.filter(knowledge__key="fund-reports", version="2026-Q3")
    )
    version.status = AgentVersion.Status.PUBLISHED
    version.save()
    AgentPin.objects.create(app=app, agent=agent, version=version)
    return agent.key


def run_set(agent_key: str, verbose: bool) -> dict:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from runtime.engine import execute_run
    from runtime.services import start_run
    from tenancy.models import App

    analyst = get_user_model().objects.get(username="analyst")
    app = App.objects.get(slug=APP)
    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    stats = dict(figures=0, figures_ok=0, direct=0, direct_ok=0, pages=0, pages_ok=0)
    stats.update(oos=0, oos_ok=0, false_not_found=0, seconds=0.0)
    failures = []
    suffix = f"-{agent_key}-{int(time.time())}"
    for session, question, expected, document, page in QUESTIONS:
        started = time.perf_counter()
        run = start_run(
            user=analyst,
            app=app,
            agent_key=agent_key,
            input=question,
            session_id=session + suffix if session else "",
        )
        execute_run(run.pk)
        stats["seconds"] += time.perf_counter() - started
        answer = client.get(f"/v1/apps/{APP}/runs/{run.pk}/answer").json()
        blocks = [b for b in answer.get("blocks", []) if b.get("state") == "visible"]
        texts = [b["content"].get("text", "") for b in blocks if b.get("content")]
        verified = [
            r["id"]
            for e in client.get(f"/v1/apps/{APP}/runs/{run.pk}/events").json().get("events", [])
            if e["type"] == "citation.verified"
            for r in e["data"]["references"]
            if r["status"] == "VERIFIED"
        ]
        previews: dict[str, dict] = {}

        def preview(cite: str, run_id: str = run.pk, cache: dict = previews) -> dict:
            if cite not in cache:
                response = client.get(f"/v1/apps/{APP}/runs/{run_id}/citations/{cite}/preview")
                cache[cite] = response.json() if response.status_code == 200 else {}
            return cache[cite]

        for text in texts:
            for value, cite in figures_before_markers(text):
                stats["figures"] += 1
                if value in numbers(preview(cite).get("content", "")):
                    stats["figures_ok"] += 1
                else:
                    failures.append(f"figure {value} not in {cite}: {question}")
        first = texts[0] if texts else ""
        not_found = is_not_found(texts) or any(NOT_FOUND_PHRASE in t for t in texts)
        if expected is None:
            stats["oos"] += 1
            if not verified and not_found:
                stats["oos_ok"] += 1
            else:
                failures.append(f"out of scope answered: {question}")
        else:
            stats["direct"] += 1
            if not_found:
                stats["false_not_found"] += 1
            hit = holds(first, expected)
            stats["direct_ok"] += hit
            if not hit:
                failures.append(f"direct answer misses {expected}: {question} → {first[:80]!r}")
            stats["pages"] += 1
            refs = [preview(c) for c in cited_ids(first)]
            if any(
                r.get("documentId") == document and r.get("sourceRef", {}).get("page") == page
                for r in refs
            ):
                stats["pages_ok"] += 1
            else:
                failures.append(f"page {document} p{page} not cited first: {question}")
        if verbose:
            print(f"\n## {question}\n" + "\n---\n".join(texts))
    stats["failures"] = failures
    return stats


def pct(ok: int, total: int) -> str:
    return f"{100 * ok / total:5.1f} % ({ok}/{total})" if total else "  n/a"


def report(name: str, stats: dict) -> None:
    print(f"\n{name}: {len(QUESTIONS)} questions, {stats['seconds']:.1f} s of runs")
    print(f"  figure-citation precision  {pct(stats['figures_ok'], stats['figures'])}")
    print(f"  direct-answer hit rate     {pct(stats['direct_ok'], stats['direct'])}")
    print(f"  cited-page accuracy        {pct(stats['pages_ok'], stats['pages'])}")
    print(f"  not-found correctness      {pct(stats['oos_ok'], stats['oos'])}")
    print(f"  in-scope answered not-found {stats['false_not_found']}")
    for failure in stats["failures"]:
        print(f"    - {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print every answer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sparktide-bench-answers-") as var_dir:
        setup_django(var_dir)
        report("extractive", run_set("researcher", args.verbose))
        url = os.environ.get("SPARKTIDE_BENCH_OPENAI_URL")
        if url:
            report("openai", run_set(add_openai_agent(url), args.verbose))
        else:
            print("\nopenai: skipped (set SPARKTIDE_BENCH_OPENAI_URL to an OpenAI-compatible /v1)")


if __name__ == "__main__":
    main()
