"""A fact is bound to the chunk that states it: located at ingestion (or on the page the
manifest gives), refused when no chunk states it, and handed out as a numeric handle only
together with the citation of that chunk."""

import re
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command

from citations.models import NumericHandle
from knowledge.figures import anchor_value, value_spans
from knowledge.ingest import FactInput, FactNotStated
from knowledge.models import Fact
from runs.models import Run
from tests import factories
from tests.answers.conftest import DEMO_MANIFEST

pytestmark = pytest.mark.django_db

# Page 1 and page 2 are separate chunks (a chunk never spans pages).
PAGES = [
    "第一页：报告期末股票仓位为 61.20%，营业收入 6.2 亿元，研发费用率 16.0％，总资产 48.6 亿元。",
    "第二页：行业平均股票仓位 55.0%。净利润 6.2 亿元，同比增长 21.7%。",
]


def ingest(tenant, facts, pages=PAGES):
    version = factories.make_knowledge(tenant)
    return factories.add_document(version, pages, facts=facts)


@pytest.mark.parametrize(
    ("value", "unit", "written"),
    [
        ("61.2", "%", "61.20%"),  # trailing zero in the text
        ("16", "%", "16.0％"),  # full-width percent, value without decimals
        ("48.6", "亿元", "48.6 亿元"),  # a space between number and unit
        ("21.70", "%", "21.7%"),
    ],
)
def test_a_value_is_found_however_the_text_writes_it(value, unit, written):
    text = "".join(PAGES)
    spans = value_spans(text, Decimal(value), unit)
    assert [text[s:e] for s, e in spans] == [written]


def test_a_number_inside_another_number_is_not_the_value():
    assert value_spans("共 2061.25 亿元；61.2", Decimal("61.2"), "亿元") == []
    assert value_spans("1,286.40 亿元", Decimal("1286.4"), "亿元") == [(0, 11)]


def test_ingestion_binds_each_fact_to_the_chunk_that_states_it(tenant):
    document = ingest(
        tenant,
        [
            FactInput(key="equity", value=Decimal("61.2"), unit="%", label="股票仓位"),
            FactInput(key="growth", value=Decimal("21.7"), unit="%", label="净利润同比增长"),
        ],
    )
    pages = {f.key: f.chunk.page for f in Fact.objects.filter(document=document)}
    assert pages == {"equity": 1, "growth": 2}
    for fact in Fact.objects.filter(document=document):
        assert value_spans(fact.chunk.text, fact.value, fact.unit)


def test_a_value_written_twice_goes_to_the_sentence_its_label_names(tenant):
    document = ingest(
        tenant,
        [
            FactInput(key="revenue", value=Decimal("6.2"), unit="亿元", label="营业收入"),
            FactInput(key="profit", value=Decimal("6.2"), unit="亿元", label="净利润"),
        ],
    )
    pages = {f.key: f.chunk.page for f in Fact.objects.filter(document=document)}
    assert pages == {"revenue": 1, "profit": 2}


def test_the_page_a_fact_gives_decides_between_two_statements(tenant):
    document = ingest(
        tenant,
        [FactInput(key="profit", value=Decimal("6.2"), unit="亿元", label="营业收入", page=2)],
    )
    assert Fact.objects.get(document=document).chunk.page == 2


def test_a_fact_no_chunk_states_is_refused_at_ingestion(tenant):
    with pytest.raises(FactNotStated, match="6.3亿元 is not written in the document") as refused:
        ingest(tenant, [FactInput(key="revenue", value=Decimal("6.3"), unit="亿元")])
    assert (refused.value.index, refused.value.field) == (0, "value")


def test_anchoring_prefers_nothing_to_a_wrong_unit():
    assert anchor_value([(1, "营业收入 6.2 亿元")], Decimal("6.2"), "%") is None


# --- through the manifest ----------------------------------------------------------------


def demo_data() -> dict:
    return yaml.safe_load(DEMO_MANIFEST.read_text())


def apply(data: dict, tmp_path: Path) -> str:
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    out = StringIO()
    call_command("apply_manifest", str(path), stdout=out)
    return out.getvalue()


def first_fact(data: dict) -> dict:
    return data["tenants"][0]["knowledge"][0]["versions"][0]["documents"][0]["facts"][0]


FACT_PATH = "tenants[0].knowledge[0].versions[0].documents[0].facts[0]"


def test_every_demo_fact_is_bound_to_a_chunk_that_states_it(tmp_path):
    apply(demo_data(), tmp_path)
    facts = list(Fact.objects.select_related("chunk"))
    assert len(facts) == 11
    for fact in facts:
        assert fact.chunk is not None
        assert value_spans(fact.chunk.text, fact.value, fact.unit), fact.key
    pages = {f.key: f.chunk.page for f in facts if f.document.key == "beichen-pharma-2026q3"}
    assert pages == {
        "revenue_q3": 1,
        "revenue_growth_yoy": 1,
        "net_profit_q3": 1,
        "rd_expense_ratio": 2,
    }


def test_a_manifest_fact_that_its_document_does_not_state_is_refused_naming_its_key_path(
    tmp_path,
):
    data = demo_data()
    first_fact(data)["value"] = 48.7
    del first_fact(data)["page"]  # found nowhere in the document: the value is wrong
    with pytest.raises(CommandError) as refused:
        apply(data, tmp_path)
    message = str(refused.value)
    assert f"manifest.yaml: {FACT_PATH}.value: 48.7亿元 is not written in the document" in message
    assert not Fact.objects.exists()  # all or nothing


def test_a_manifest_fact_on_a_page_that_does_not_state_it_is_refused_naming_its_page(tmp_path):
    data = demo_data()
    first_fact(data)["page"] = 2
    with pytest.raises(
        CommandError, match=re.escape(f"{FACT_PATH}.page: 48.6亿元 is not written in page 2")
    ):
        apply(data, tmp_path)


@pytest.mark.parametrize(("page", "why"), [(9, "page 9 does not exist"), (0, "must be a page")])
def test_a_fact_page_must_be_a_page_of_the_document(tmp_path, page, why):
    data = demo_data()
    first_fact(data)["page"] = page
    with pytest.raises(CommandError, match=re.escape(f"{FACT_PATH}.page: {why}")):
        apply(data, tmp_path)


def test_giving_the_page_a_published_fact_was_found_on_is_no_change(tmp_path):
    data = demo_data()
    del first_fact(data)["page"]
    apply(data, tmp_path)  # found on page 1 by itself
    assert "no changes" in apply(demo_data(), tmp_path)  # the demo says page: 1


def test_moving_a_published_fact_to_another_page_is_a_change_of_published_content(tmp_path):
    data = demo_data()
    apply(data, tmp_path)
    first_fact(data)["page"] = 3
    with pytest.raises(
        CommandError, match=re.escape(f"{FACT_PATH}: published version content cannot")
    ):
        apply(data, tmp_path)


# --- handles -----------------------------------------------------------------------------


@pytest.fixture
def two_page_report(tenant, app, alice):
    facts = [
        FactInput(key="equity", value=Decimal("61.2"), unit="%", label="股票仓位"),
        FactInput(key="growth", value=Decimal("21.7"), unit="%", label="净利润同比增长"),
    ]
    return factories.fund_reports(tenant, app, alice, pages=PAGES, facts=facts)


@pytest.mark.django_db(transaction=True)
def test_retrieving_a_chunk_issues_handles_only_for_the_facts_it_states(
    app, alice, two_page_report
):
    run = factories.scripted_run(
        app, alice, [{"search": "行业平均", "topK": 1}], knowledge=[two_page_report]
    )
    assert run.status == Run.Status.COMPLETED
    (reference,) = run.citations.all()
    assert reference.chunk.page == 2
    handles = list(NumericHandle.objects.filter(run=run).select_related("fact", "citation"))
    assert [h.fact.key for h in handles] == ["growth"]  # not page 1's equity
    assert handles[0].citation == reference


@pytest.mark.django_db(transaction=True)
def test_a_handle_is_issued_with_the_citation_of_the_chunk_that_states_its_value(
    app, alice, two_page_report
):
    run = factories.scripted_run(
        app, alice, [{"search": "股票仓位 净利润", "topK": 2}], knowledge=[two_page_report]
    )
    for handle in NumericHandle.objects.filter(run=run).select_related("fact", "citation__chunk"):
        assert handle.citation.chunk_id == handle.fact.chunk_id
        assert value_spans(handle.citation.chunk.text, handle.fact.value, handle.fact.unit)


@pytest.mark.django_db(transaction=True)
def test_a_fact_bound_to_no_chunk_is_never_handed_out(tenant, app, alice):
    version = factories.make_knowledge(tenant, "legacy")
    document = factories.add_document(version, PAGES, key="legacy-doc")
    # As a fact stored before anchoring that no chunk states: chunk NULL.
    Fact.objects.create(document=document, key="old", value=Decimal("99.9"), unit="%")
    factories.publish(version)
    factories.lease(app, version)
    run = factories.scripted_run(
        app, alice, [{"search": "股票仓位", "topK": 2}], knowledge=[version]
    )
    assert run.citations.exists()
    assert not NumericHandle.objects.filter(run=run).exists()


# --- facts stored before anchoring -------------------------------------------------------


def test_the_migration_anchors_earlier_facts_and_numbers_earlier_chunks(tenant):
    import importlib

    from django.apps import apps

    from knowledge.models import Chunk

    migration = importlib.import_module(
        "knowledge.migrations.0004_facts_bound_to_their_chunk_chunk_paragraphs"
    )
    document = ingest(tenant, [])
    # As stored before: no chunk on the facts, every chunk at paragraph 1.
    stated = Fact.objects.create(document=document, key="growth", value=Decimal("21.7"), unit="%")
    nowhere = Fact.objects.create(document=document, key="old", value=Decimal("99.9"), unit="%")
    expected = {c.pk: c.paragraph for c in Chunk.objects.filter(document=document)}
    Chunk.objects.filter(document=document).update(paragraph=1)

    migration.anchor_existing_facts(apps, None)
    migration.number_paragraphs(apps, None)

    stated.refresh_from_db()
    nowhere.refresh_from_db()
    assert stated.chunk.page == 2
    assert nowhere.chunk_id is None  # never handed out
    assert {c.pk: c.paragraph for c in Chunk.objects.filter(document=document)} == expected


def test_chunks_record_the_paragraph_of_their_page_they_begin_at(tenant):
    from knowledge.models import Chunk

    long_line = "长句。" * 250  # 750 characters: each paragraph here is a chunk of its own
    document = ingest(tenant, [], pages=["标题\n\n第一段\n" + long_line + "\n\n尾段", "第二页"])
    chunks = list(Chunk.objects.filter(document=document).order_by("ordinal"))
    assert [(c.page, c.paragraph, c.text[:2]) for c in chunks] == [
        (1, 1, "标题"),
        (1, 2, "第一"),  # 标题 is paragraph 1, 第一段 2, the long line 3
        (1, 4, "尾段"),
        (2, 1, "第二"),
    ]
