"""The fixtures the shipped sets ask about: the PDF and DOCX / Markdown ones are written by
test code and ingested through the manifest's ``file:``; every document and page a set
names exists in its fixture, and a set runs end to end on it."""

import glob
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from evaluation.runner import evaluate, resolve, summarize
from evaluation.sets import load_set
from knowledge.models import Document
from tests.answers.file_fixtures import SET_FIXTURES as FIXTURES
from tests.answers.file_fixtures import fixture_manifest

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "tests" / "answers" / "sets"
# The ledger fixture's documents and their pages (tests/answers/ledger_fixture.py).
LEDGER_PAGES = {
    "lanzhou-bank-2026h1": 4,
    "qingyu-value-fund-2026q3": 2,
    "chixia-board-2026-09": 1,
    "lanfeng-citybanks-2026-09": 1,
}
# The quarry fixture's documents and their pages (tests/answers/quarry_fixture.py).
QUARRY_PAGES = {
    "chengyuan-insurance-2026": 4,
    "zhechuan-dividend-2026": 2,
    "cenxi-forecast-2026": 1,
    "jichuan-incentive-2027": 1,
}


def apply(name: str, tmp_path: Path) -> None:
    call_command("apply_manifest", str(fixture_manifest(name, tmp_path)), stdout=StringIO())


def test_the_pdf_table_and_the_one_line_risks_are_ingested_with_their_pages(tmp_path):
    apply("coldchain", tmp_path)
    report = Document.objects.get(key="yuanchuan-logistics-2026h1")
    assert report.page_count == 3 and report.title == "远川冷链物流股份有限公司 2026 年半年度报告"
    pages: dict[int, str] = {}
    for chunk in report.chunks.order_by("pk"):
        pages[chunk.page] = pages.get(chunk.page, "") + "\n" + chunk.text
    # A typeset table's row: its cells on one line, as ingestion writes every table row
    # (docs/ingest.md: cell | cell | cell).
    assert "华东 | 68.5 | 142 | 1,260 | 91.2%" in pages[2]
    assert (
        "区域 | 冷链仓储面积（万平方米） | 干线线路（条） | 冷藏车辆（台） | 仓库出租率" in pages[2]
    )
    assert (
        pages[3].lstrip().startswith("第四节 风险提示。一、燃油价格波动可能推高干线运输成本；二、")
    )
    assert report.facts.get(key="cold_storage_area").chunk.page == 2


def test_the_docx_and_markdown_tables_are_ingested_as_rows(tmp_path):
    apply("chenghu", tmp_path)
    annual = Document.objects.get(key="chenghu-electronics-2025")
    assert annual.page_count == 2
    text = "\n\n".join(c.text for c in annual.chunks.order_by("ordinal"))
    assert "汽车电子 | 96.5 | 70.2 | 27.3% | 增加 2.4 个百分点" in text.split("\n\n")
    markdown = Document.objects.get(key="lingfeng-bio-2026q3")
    rows = "\n\n".join(c.text for c in markdown.chunks.all()).split("\n\n")
    assert "研发费用 | 21,730 | 25.9% | 60,470" in rows
    fund = Document.objects.get(key="chenghu-growth-fund-2026q3")
    assert "1. 澄湖电子，占基金资产净值 9.6%；2. 岭峰生物" in fund.chunks.first().text


def test_the_ledger_files_are_ingested_with_their_pages_and_rows(tmp_path):
    apply("ledger", tmp_path)
    documents = {d.key: d for d in Document.objects.filter(key__in=LEDGER_PAGES)}
    assert {key: d.page_count for key, d in documents.items()} == LEDGER_PAGES

    def rows(key: str) -> list[str]:
        return "\n".join(c.text for c in documents[key].chunks.order_by("pk")).split("\n")

    # A typeset table's row: its cells on one line, as the PDF's text layer writes them.
    bank = rows("lanzhou-bank-2026h1")
    assert "核心一级资本充足率 9.42 9.18 9.61 9.35" in bank
    assert "澜港集团有限公司 国有法人 7.65 449,055,000 质押 200,000,000" in bank
    fund = "\n".join(rows("qingyu-value-fund-2026q3"))
    assert "基金托管人 | 澜州银行股份有限公司" in fund
    assert "8 | 688206 | 星岚科技 | 1,046,500 | 118,254,500.00 | 3.05" in fund
    board = "\n".join(rows("chixia-board-2026-09"))
    assert "表决结果：同意 8 票，反对 0 票，弃权 1 票。" in board
    note = "\n".join(rows("lanfeng-citybanks-2026-09"))
    assert "云岭农商行 | 603486 | 中性 | 4.60 | 4.38 | 0.61 | 7.18 | 0.52" in note


def test_the_quarry_files_are_ingested_with_their_pages_and_rows(tmp_path):
    apply("quarry", tmp_path)
    documents = {d.key: d for d in Document.objects.filter(key__in=QUARRY_PAGES)}
    assert {key: d.page_count for key, d in documents.items()} == QUARRY_PAGES

    def rows(key: str, page: int | None = None) -> list[str]:
        chunks = documents[key].chunks.order_by("pk")
        if page is not None:
            chunks = chunks.filter(page=page)
        # A row's cells are on one line in order, set apart by spaces or by " | ".
        return "\n".join(c.text for c in chunks).replace(" | ", " ").split("\n")

    insurer = rows("chengyuan-insurance-2026")
    assert "澄远人寿 118.3 206.5 115.7 201.2" in insurer
    assert "寿险 158,216.40 10,408.72 14.85 1,486,302.55" in insurer
    # The investment table goes on after the page break, under the next page's header.
    assert "股票 96,205.31 7.45 6.92" in rows("chengyuan-insurance-2026", page=4)
    assert "债券投资 842,516.87 65.28 63.87" in rows("chengyuan-insurance-2026", page=3)
    assert "A 股 2027/5/20 － 2027/5/21 2027/5/21" in rows("zhechuan-dividend-2026", page=1)
    assert any("0.315 元" in row for row in rows("zhechuan-dividend-2026", page=2))
    forecast = rows("cenxi-forecast-2026")
    assert any(row.startswith("归属于上市公司股东的净利润：预计 42,000 万元") for row in forecast)
    plan = rows("jichuan-incentive-2027")
    assert "贝霖 董事会秘书 15.00 2.50% 0.04%" in plan
    assert "第三个解除限售期 2029 年 不低于 73% 不低于 52%" in plan


def test_every_document_and_page_a_set_names_exists_in_its_fixture(tmp_path):
    # (each fixture once: the later hands' sets ask about the same manifests)
    for name in {source: name for name, (source, *_) in FIXTURES.items()}.values():
        apply(name, tmp_path)
    pages = {d.key: d.page_count for d in Document.objects.all()}
    checked = 0
    for path in glob.glob(str(SETS / "*.yaml")):
        loaded = load_set(path)
        assert loaded.name.removesuffix("_heldout") in FIXTURES, path
        for q in loaded.questions:
            if q.document:
                assert q.document in pages, (path, q.key, q.document)
                assert q.page is None or q.page <= pages[q.document], (path, q.key)
                checked += 1
    assert checked >= 100


def test_a_shipped_set_runs_end_to_end_on_its_fixture(tmp_path):
    apply("coldchain", tmp_path)
    app, user, (target,) = resolve("cold-desk", "yc-analyst", [])
    evaluation = evaluate(
        [load_set(SETS / "coldchain_heldout.yaml")],
        app=app,
        user=user,
        target=target,
        progress=lambda line: None,
    )
    summary = summarize(evaluation.results)
    assert summary["questions"] == 15 and summary["errors"] == 0
    assert {r.status for r in evaluation.results} == {"COMPLETED"}
    # What the reader writes is anchored, whatever it gets right.
    assert summary["figure_precision"]["rate"] == 1.0 and summary["verified_rate"]["rate"] == 1.0
    assert summary["off_topic_not_found"] == {"ok": 1, "total": 1, "rate": 1.0}
