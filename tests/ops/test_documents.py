"""Documents in: text, Markdown, PDF with a text layer and DOCX become pages of a DRAFT
version (manage.py ingest, the manifest's ``file:``), chunked without cutting a sentence
or a table row, and retrievable with their page numbers once published."""

import io
from pathlib import Path

import docx
import pytest
from django.core.management import CommandError, call_command
from docx.enum.text import WD_BREAK

from citations.models import CitationReference
from knowledge.files import UnreadableFile, read_file, read_stream
from knowledge.models import Document, Knowledge, KnowledgeVersion, Vocabulary
from provisioning.manifest import ManifestError, apply_manifest, read_manifest
from tests import factories
from tests.ops.pdfs import make_pdf

PDF_PAGES = [
    ["Quarterly report of Zephyr Capital.", "Revenue grew 12 percent."],
    ["Costs stayed flat this quarter."],
    ["Outlook: Quasar fund keeps growing."],
]


@pytest.fixture
def pdf(tmp_path) -> Path:
    path = tmp_path / "zephyr-report.pdf"
    path.write_bytes(make_pdf(PDF_PAGES, title="Zephyr quarterly"))
    return path


@pytest.fixture
def scanned(tmp_path) -> Path:
    path = tmp_path / "scan.pdf"
    path.write_bytes(make_pdf([[], []]))
    return path


def write_docx(path: Path, *, rows: int = 3) -> Path:
    document = docx.Document()
    document.core_properties.title = "星河基金季报"
    document.add_heading("星河基金季报", level=1)
    document.add_paragraph("本季度基金净值上涨。管理人维持稳健策略。")
    document.add_heading("持仓明细", level=2)
    table = document.add_table(rows=rows + 1, cols=3)
    for i, cell in enumerate(("证券", "权重", "说明")):
        table.rows[0].cells[i].text = cell
    for r in range(1, rows + 1):
        for i, cell in enumerate((f"证券{r}", f"{r}.5%", f"第{r}行说明。含句号。")):
            table.rows[r].cells[i].text = cell
    document.add_paragraph("第一页结束。").add_run().add_break(WD_BREAK.PAGE)
    document.add_paragraph("第二页：北极星债券久期缩短。")
    document.save(path)
    return path


@pytest.fixture
def docx_file(tmp_path) -> Path:
    return write_docx(tmp_path / "xinghe.docx")


def test_a_pdf_with_a_text_layer_gives_one_page_per_pdf_page(pdf):
    parsed = read_file(pdf)
    assert parsed.kind == "pdf" and parsed.title == "Zephyr quarterly"
    assert len(parsed.pages) == 3
    assert parsed.pages[0] == "Quarterly report of Zephyr Capital.\nRevenue grew 12 percent."
    assert "Costs stayed flat" in parsed.pages[1]
    assert "Quasar" in parsed.pages[2]


def test_a_pdf_page_without_text_stays_a_page_so_the_numbers_stay_right(tmp_path):
    path = tmp_path / "mixed.pdf"
    path.write_bytes(make_pdf([["First page."], [], ["Third page."]]))
    assert read_file(path).pages == ["First page.", "", "Third page."]


def test_a_scanned_pdf_without_a_text_layer_is_refused_with_a_clear_error(scanned):
    with pytest.raises(UnreadableFile, match="no page of this PDF has a text layer.*OCR"):
        read_file(scanned)


def test_a_docx_keeps_headings_table_rows_and_its_page_break(docx_file):
    parsed = read_file(docx_file)
    assert parsed.kind == "docx" and parsed.title == "星河基金季报"
    assert len(parsed.pages) == 2
    first, second = parsed.pages
    paragraphs = first.split("\n\n")
    assert paragraphs[0] == "# 星河基金季报"
    assert "## 持仓明细" in paragraphs
    assert "证券 | 权重 | 说明" in paragraphs
    assert "证券2 | 2.5% | 第2行说明。含句号。" in paragraphs
    assert paragraphs[-1] == "第一页结束。"
    assert second == "第二页：北极星债券久期缩短。"


def test_markdown_keeps_headings_as_structure_and_tables_as_whole_rows():
    text = "# 年报\n正文第一段。\n## 风险\n风险提示。\n\n| 项目 | 数值 |\n| --- | --- |\n| 营收 | 12% |\n"
    parsed = read_stream(io.BytesIO(text.encode()), "annual.md")
    assert parsed.title == "年报"
    assert parsed.pages == [
        "# 年报\n\n正文第一段。\n\n## 风险\n\n风险提示。\n\n项目 | 数值\n\n营收 | 12%"
    ]


def test_plain_text_pages_are_split_at_form_feeds():
    parsed = read_stream(io.BytesIO("第一页。\f第二页。".encode()), "notes.txt")
    assert parsed.pages == ["第一页。", "第二页。"] and parsed.title == "notes"


def test_an_unsupported_file_type_is_refused():
    with pytest.raises(UnreadableFile, match="unsupported file type .xlsx"):
        read_stream(io.BytesIO(b""), "sheet.xlsx")


@pytest.fixture
def funds(tenant):
    return Knowledge.objects.create(tenant=tenant, key="funds", type=Knowledge.Type.MANAGED)


def ingest(*args) -> str:
    out = io.StringIO()
    call_command("ingest", *map(str, args), stdout=out)
    return out.getvalue()


def test_ingest_creates_a_draft_version_and_reports_progress(funds, pdf, docx_file):
    output = ingest("acme/funds@2026-q3", pdf, docx_file)
    version = KnowledgeVersion.objects.get(knowledge=funds, version="2026-q3")
    assert version.status == KnowledgeVersion.Status.DRAFT
    assert "+ DRAFT version funds@2026-q3" in output
    assert "zephyr-report.pdf (pdf) → funds@2026-q3/zephyr-report" in output
    assert "page 1/3" in output and "page 3/3" in output and "chunks" in output
    assert "still a DRAFT" in output
    documents = {d.key: d for d in version.documents.all()}
    assert documents["zephyr-report"].page_count == 3
    assert documents["zephyr-report"].title == "Zephyr quarterly"
    assert documents["xinghe"].page_count == 2
    pages = {c.text: c.page for c in documents["xinghe"].chunks.all()}
    assert pages["第二页：北极星债券久期缩短。"] == 2


def test_ingest_refuses_a_scanned_pdf_and_writes_nothing(funds, pdf, scanned):
    with pytest.raises(CommandError, match="OCR"):
        ingest("acme/funds@1", pdf, scanned)
    assert not Document.objects.exists() and not KnowledgeVersion.objects.exists()


# A CJK font embedded as two-byte codes without a usable map to Unicode: the text
# extractor reads each code a byte at a time, so every character comes out after a NUL.
NUL_SEPARATED = "".join(f"\x00{char}" for char in "Report")


def test_a_pdf_whose_text_layer_reads_as_nul_separated_characters_is_refused(tmp_path):
    path = tmp_path / "cjk.pdf"
    path.write_bytes(make_pdf([["A readable first page."], [NUL_SEPARATED]]))
    with pytest.raises(
        UnreadableFile,
        match=r"cjk.pdf: the PDF's text layer cannot be read "
        r"\(page 2 holds NUL \(U\+0000\)",
    ):
        read_file(path)


def test_ingest_refuses_a_pdf_with_nul_in_its_text_layer_and_writes_nothing(funds, pdf, tmp_path):
    """Before, this ended in a traceback (``DataError: … cannot contain NUL``)."""
    path = tmp_path / "cjk.pdf"
    path.write_bytes(make_pdf([[NUL_SEPARATED]]))
    with pytest.raises(CommandError, match="text layer cannot be read.*as .txt/.md"):
        ingest("acme/funds@1", pdf, path)
    assert not Document.objects.exists() and not KnowledgeVersion.objects.exists()


def test_a_text_file_holding_nul_is_refused_the_same_way():
    with pytest.raises(UnreadableFile, match="notes.txt: page 1 holds NUL"):
        read_stream(io.BytesIO("第一段\x00第二段".encode()), "notes.txt")


def test_ingest_refuses_a_published_version(funds, pdf):
    KnowledgeVersion.objects.create(
        knowledge=funds, version="1", status=KnowledgeVersion.Status.PUBLISHED
    )
    with pytest.raises(CommandError, match="PUBLISHED: its content cannot change"):
        ingest("acme/funds@1", pdf)


def test_ingest_refuses_an_unknown_knowledge_base_unless_asked_to_create_it(tenant, pdf):
    with pytest.raises(CommandError, match="no knowledge 'new-kb'"):
        ingest("acme/new-kb@1", pdf)
    ingest("acme/new-kb@1", pdf, "--create-knowledge")
    assert Knowledge.objects.get(key="new-kb").type == Knowledge.Type.MANAGED


def test_table_rows_and_sentences_are_never_cut_across_chunks(funds, tmp_path):
    path = write_docx(tmp_path / "big.docx", rows=120)  # many chunks' worth of rows
    long_sentences = "".join(f"第{i}句说明市场情况并给出一个完整的判断。" for i in range(1200))
    (tmp_path / "long.txt").write_text(long_sentences)
    ingest("acme/funds@1", path, tmp_path / "long.txt")
    table = Document.objects.get(key="big")
    rows = {f"证券{r} | {r}.5% | 第{r}行说明。含句号。" for r in range(1, 121)}
    seen = set()
    for chunk in table.chunks.all():
        for paragraph in chunk.text.split("\n\n"):
            if "|" in paragraph and paragraph != "证券 | 权重 | 说明":
                assert paragraph in rows, paragraph  # a whole row, never a piece
                seen.add(paragraph)
    assert seen == rows and table.chunks.count() > 5
    text = Document.objects.get(key="long")
    assert text.chunks.count() >= 2  # longer than one chunk may be
    for chunk in text.chunks.all():
        assert chunk.text.startswith("第") and chunk.text.endswith("。")


def test_published_pdf_and_docx_pages_are_retrievable_with_their_page_numbers(
    tenant, app, alice, funds, pdf, docx_file
):
    output = ingest("acme/funds@2026-q3", pdf, docx_file, "--publish")
    assert "published" in output
    version = KnowledgeVersion.objects.get(knowledge=funds, version="2026-q3")
    assert version.status == KnowledgeVersion.Status.PUBLISHED
    factories.lease(app, version)
    run = factories.scripted_run(
        app,
        alice,
        [
            {"search": "Quasar", "topK": 1},
            {"search": "北极星债券", "topK": 1},
            {"answerPart": "Quasar [[cite:{{c1}}]] 北极星 [[cite:{{c2}}]]"},
        ],
        knowledge=[version],
    )
    assert run.status == "COMPLETED", run.reason
    client = factories.client_for(alice)
    found = {}
    for reference in CitationReference.objects.filter(run=run):
        url = f"/v1/apps/{app.slug}/runs/{run.pk}/citations/{reference.pk}/preview"
        body = client.get(url).json()
        found[body["sourceRef"]["id"]] = (body["sourceRef"]["page"], body["content"])
    assert found["zephyr-report"] == (3, "Outlook: Quasar fund keeps growing.")
    assert found["xinghe"] == (2, "第二页：北极星债券久期缩短。")


def manifest(tmp_path, document: str) -> Path:
    path = tmp_path / "manifest.yaml"
    path.write_text(
        f"""
tenants:
  - key: files-co
    name: 文件公司
    knowledge:
      - key: reports
        type: MANAGED
        versions:
          - version: "1"
            status: PUBLISHED
            documents:
              - {document}
"""
    )
    return path


def test_a_manifest_document_may_name_a_file_relative_to_the_manifest(db, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "report.pdf").write_bytes(make_pdf(PDF_PAGES, title="Zephyr"))
    path = manifest(tmp_path, "{key: report, file: docs/report.pdf}")
    result = apply_manifest(read_manifest(path))
    assert "+ knowledge version files-co/reports@1 (1 document)" in result.changes
    document = Document.objects.get(key="report")
    assert document.title == "Zephyr" and document.page_count == 3
    assert document.chunks.get(text__contains="Quasar").page == 3
    # Applied again: the same pages, so nothing changes (and the published version is accepted).
    assert apply_manifest(read_manifest(path)).changes == []


def test_a_manifest_document_gives_pages_or_a_file_not_both(db, tmp_path):
    (tmp_path / "a.txt").write_text("正文。")
    path = manifest(tmp_path, '{key: a, title: A, file: a.txt, pages: ["x"]}')
    with pytest.raises(ManifestError, match="exactly one of pages or file") as error:
        read_manifest(path)
    assert error.value.path == "tenants[0].knowledge[0].versions[0].documents[0].file"


def test_a_manifest_file_that_cannot_be_read_names_its_path(db, tmp_path):
    (tmp_path / "scan.pdf").write_bytes(make_pdf([[]]))
    with pytest.raises(ManifestError, match="OCR") as error:
        read_manifest(manifest(tmp_path, "{key: s, file: scan.pdf}"))
    assert error.value.path.endswith("documents[0].file")


# --- ingest → answer in one step: --app leases, --agent releases and re-pins -----------------


@pytest.fixture
def extractive_desk(app, funds):
    """The app answers with an extractive agent over an older version of ``funds``."""
    first = KnowledgeVersion.objects.create(knowledge=funds, version="2026-q2")
    factories.add_document(first, ["二季度：Zephyr 基金规模 3.0 亿元。"], key="q2")
    factories.publish(first)
    factories.lease(app, first)
    return factories.make_agent(
        app.tenant,
        "researcher",
        model={"provider": "extractive"},
        knowledge=[first],
        pin_to=[app],
    )


def test_ingest_with_app_and_agent_makes_the_app_answer_from_the_new_file(
    app, alice, funds, pdf, extractive_desk
):
    """One command: the PDF is ingested and published, the app leases it, a new agent version
    allowing it is published and pinned, and the next run cites the PDF's page."""
    from agents.models import AgentPin
    from runs.models import Run
    from runtime.engine import execute_run
    from runtime.services import start_run

    output = ingest(
        "acme/funds@2026-q3", pdf, "--publish", "--app", app.slug, "--agent", "researcher"
    )
    version = KnowledgeVersion.objects.get(knowledge=funds, version="2026-q3")
    assert "+ lease: business → funds@2026-q3" in output
    assert "+ agent researcher@2 published (a copy of researcher@1" in output
    pinned = AgentPin.objects.get(app=app, agent__key="researcher").version
    assert pinned.version == "2" and pinned.status == "PUBLISHED"
    assert {v.label for v in pinned.allowed_knowledge.all()} == {
        "funds@2026-q2",
        "funds@2026-q3",
    }
    assert pinned.model == extractive_desk.model

    run = start_run(user=alice, app=app, agent_key="researcher", input="Quasar fund outlook?")
    execute_run(run.pk)
    run = Run.objects.get(pk=run.pk)
    assert run.status == "COMPLETED", run.reason
    reference = CitationReference.objects.filter(run=run, version=version).first()
    assert reference is not None, "the answer did not retrieve the new version"
    body = (
        factories.client_for(alice)
        .get(f"/v1/apps/{app.slug}/runs/{run.pk}/citations/{reference.pk}/preview")
        .json()
    )
    assert body["sourceRef"]["page"] == 3
    assert body["content"] == "Outlook: Quasar fund keeps growing."


def test_ingest_with_app_only_leases_and_says_what_is_left(app, funds, pdf, extractive_desk):
    from agents.models import AgentPin

    output = ingest("acme/funds@2026-q3", pdf, "--publish", "--app", app.slug)
    assert "an agent version that allows it must be pinned (--agent does both)" in output
    assert app.leases.filter(version__version="2026-q3").exists()
    assert AgentPin.objects.get(app=app, agent__key="researcher").version == extractive_desk


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--app", "business"], "give --publish with it"),
        (["--publish", "--agent", "researcher"], "give --app with it"),
        (["--publish", "--app", "nowhere"], "no app 'nowhere' in acme"),
        (["--publish", "--app", "business", "--agent", "nobody"], "pins no agent 'nobody'"),
    ],
)
def test_ingest_refuses_a_one_step_it_cannot_complete_and_writes_nothing(
    app, funds, pdf, extractive_desk, args, message
):
    from agents.models import AgentVersion

    with pytest.raises(CommandError, match=message):
        ingest("acme/funds@2026-q3", pdf, *args)
    assert not KnowledgeVersion.objects.filter(version="2026-q3").exists()
    assert AgentVersion.objects.count() == 1 and app.leases.count() == 1


def test_rolling_back_is_pinning_the_previous_agent_version(app, funds, pdf, extractive_desk):
    from agents.models import AgentPin

    ingest("acme/funds@2026-q3", pdf, "--publish", "--app", app.slug, "--agent", "researcher")
    pin = AgentPin.objects.get(app=app, agent__key="researcher")
    pin.version = extractive_desk
    pin.save()
    assert AgentPin.objects.get(app=app, agent__key="researcher").version.version == "1"


def test_ingest_stores_the_knowledges_vocabulary(funds, pdf, tmp_path):
    words = tmp_path / "words.yaml"
    words.write_text("NIM: [净息差]\n定增: [向特定对象发行, 募集资金]\n", encoding="utf-8")

    output = ingest("acme/funds@1", pdf, "--vocabulary", words)

    assert "vocabulary of acme/funds: 2 term(s)" in output
    assert Vocabulary.objects.get(knowledge=funds).entries == {
        "nim": ["净息差"],
        "定增": ["募集资金", "向特定对象发行"],
    }


@pytest.mark.parametrize(
    ("text", "reason"),
    [("A: [B]\nB: [A]\n", "cyclic"), ("A: []\n", "non-empty list"), ("- a\n", "mapping")],
)
def test_ingest_refuses_a_bad_vocabulary_and_writes_nothing(funds, pdf, tmp_path, text, reason):
    words = tmp_path / "words.yaml"
    words.write_text(text, encoding="utf-8")

    with pytest.raises(CommandError, match=reason):
        ingest("acme/funds@1", pdf, "--vocabulary", words)
    assert not Vocabulary.objects.exists() and not KnowledgeVersion.objects.exists()
