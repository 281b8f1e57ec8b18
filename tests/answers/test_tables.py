"""Tables from ingested files are read as tables: ingestion writes every row as ``a | b | c``
(Markdown, DOCX, and a PDF table as pypdf lays it out), and the extractive reader answers
"X 的 Y" from the row labelled X and the column headed Y, quoting the row, cited to its chunk
(docs/extractive-provider.md)."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from agents.providers.structure import row_cell, units
from knowledge.files import _pdf_tables
from tenancy.models import App
from tests.answers.conftest import Desk, cited_ids
from tests.answers.file_fixtures import write_fixture


@pytest.fixture
def chenghu(db, tmp_path) -> Desk:
    call_command("apply_manifest", str(write_fixture("chenghu", tmp_path)), stdout=StringIO())
    return Desk(
        App.objects.get(slug="chenghu-desk"),
        get_user_model().objects.get(username="pm"),
        "st_chenghu_pm_token_00001",
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("question", "expected", "document"),
    [
        ("澄湖电子汽车电子业务毛利率是多少？", "27.3", "chenghu-electronics-2025"),  # DOCX
        ("岭峰生物本报告期基本每股收益是多少？", "0.41", "lingfeng-bio-2026q3"),  # Markdown
    ],
)
def test_a_table_cell_is_answered_by_row_and_column_and_cited_to_its_chunk(
    chenghu, question, expected, document
):
    answer = chenghu.ask(question)
    first = answer.texts[0]
    assert expected in first, first
    (cite,) = cited_ids(first)
    excerpt = answer.preview(cite)
    assert excerpt["documentId"] == document
    assert expected in excerpt["content"]


def test_a_row_is_addressed_by_its_label_and_the_column_the_question_names():
    header, south, east = units(
        "区域 | 冷链仓储面积（万平方米） | 冷藏车辆（台）\n\n华南 | 41.2 | 980\n\n华东 | 52.0 | 1260"
    )
    assert (header.kind, south.kind) == ("header", "row")
    assert south.clauses[row_cell(south, ("华南", "冷链仓储面积"))] == "41.2"
    assert east.clauses[row_cell(east, ("冷藏车辆",))] == "1260"
    assert row_cell(east, ("董事长",)) == -1


def test_a_pdf_table_becomes_rows_and_prose_with_spaced_figures_stays_prose():
    page = (
        "报告期内，公司实现营业收入 86.3 亿元，同比增长 12.1 %。\n"
        "区域 冷链仓储面积 冷藏车辆 仓库出租率\n"
        "华南 41.2 980 88.5%\n"
        "华东 52.0 1260 90.1%\n"
        "第四节 风险提示"
    )
    out = _pdf_tables(page)
    assert "报告期内，公司实现营业收入 86.3 亿元，同比增长 12.1 %。" in out.split("\n")
    assert "区域 | 冷链仓储面积 | 冷藏车辆 | 仓库出租率" in out.split("\n")
    assert "华东 | 52.0 | 1260 | 90.1%" in out.split("\n")
    assert out.rstrip().endswith("第四节 风险提示")


CAPITAL_ROWS = "资本充足率 13.28 13.05 13.54 13.31\n一级资本充足率 10.87 10.66 11.12 10.89"


def test_a_pdf_header_cell_spanning_the_columns_under_it_names_each_of_them():
    # pypdf's lines: two period cells (a date in brackets, spaced) over two bases each
    content = (
        "项目 本期末（2026 年 6 月 30 日） 上年末（2025 年 12 月 31 日）\n"
        " 并表 非并表 并表 非并表\n" + CAPITAL_ROWS
    )
    rows = [u for u in units(content) if u.kind == "row"]
    ratio = rows[0]
    assert ratio.clauses[row_cell(ratio, ("资本充足率", "本期末", "非并表"))] == "13.05"
    assert ratio.clauses[row_cell(ratio, ("资本充足率", "上年末", "并表"))] == "13.54"


def test_a_docx_cell_merged_across_columns_names_each_column_under_it():
    # python-docx repeats a merged cell's text in every grid cell it spans
    content = (
        "项目 | 本期末 | 本期末 | 上年末 | 上年末\n\n 项目 | 并表 | 非并表 | 并表 | 非并表\n\n"
        "资本充足率 | 13.28 | 13.05 | 13.54 | 13.31"
    )
    ratio = next(u for u in units(content) if u.kind == "row")
    assert ratio.clauses[row_cell(ratio, ("资本充足率", "本期末", "非并表"))] == "13.05"
    assert ratio.clauses[row_cell(ratio, ("资本充足率", "上年末", "非并表"))] == "13.31"
    # the first cell empty under the merged label cell reads the same
    empty = content.replace(" 项目 | 并表", " | 并表")
    ratio = next(u for u in units(empty) if u.kind == "row")
    assert ratio.clauses[row_cell(ratio, ("资本充足率", "本期末", "非并表"))] == "13.05"
    assert ratio.clauses[row_cell(ratio, ("资本充足率", "上年末", "非并表"))] == "13.31"
