"""Ingestion: pages become chunks whose UTF-16 locators slice the document text
back to exactly the chunk text, for Chinese and for characters outside the BMP."""

import hashlib
import unicodedata

import pytest

from knowledge.text import MAX_CHUNK_UTF16, PAGE_SEPARATOR, utf16_len, utf16_slice
from tests import factories

pytestmark = pytest.mark.django_db

PAGES = [
    "北辰医药 2026 年三季度营业收入同比增长 18.4%。📈\n\n创新药收入占比提升至 39.9%，𠀀𠀁 是扩展 B 区汉字。",
    "第二页：风险提示 ⚠️。集中带量采购可能导致价格下降。\n\n🧪🧬 研发投入 7.8 亿元，占营收 16.0%。",
    "第三页 👩‍👩‍👧：家庭 emoji 由多个码点组成；𝌆 是太玄经符号。\n\n结束。",
]


@pytest.fixture
def version(tenant):
    return factories.make_knowledge(tenant, "fund-reports")


def test_the_document_text_is_the_pages_joined_by_a_blank_line(version):
    document = factories.add_document(version, PAGES)
    assert document.text == PAGE_SEPARATOR.join(PAGES)
    assert document.page_count == 3


def test_locators_slice_back_to_the_exact_chunk_text_for_chinese_and_emoji(version):
    document = factories.add_document(version, PAGES)
    chunks = list(document.chunks.order_by("ordinal"))
    assert chunks
    for chunk in chunks:
        assert utf16_slice(document.text, chunk.start, chunk.end) == chunk.text
        assert chunk.end - chunk.start == utf16_len(chunk.text)
        assert chunk.locator == {"start": chunk.start, "end": chunk.end}


def test_locators_are_utf16_offsets_not_code_point_offsets(version):
    """Every emoji before a chunk counts twice: a code point index would drift."""
    document = factories.add_document(version, ["😀" * 10 + "甲" * 700 + "\n\n第二段"])
    last = document.chunks.order_by("ordinal").last()
    assert last.text == "第二段"
    code_points = document.text.index("第二段")
    assert last.start == code_points + 10 == utf16_len(document.text[:code_points])


def test_each_chunk_records_the_page_it_came_from(version):
    document = factories.add_document(version, PAGES, key="paged")
    pages = {chunk.page for chunk in document.chunks.all()}
    assert pages == {1, 2, 3}
    for chunk in document.chunks.all():
        assert chunk.text in PAGES[chunk.page - 1]


def test_a_huge_page_is_cut_into_chunks_of_at_most_16384_utf16_units(version):
    # No paragraph or sentence break: the splitter must cut hard, and never
    # between the two halves of a surrogate pair.
    page = ("营收增长😀" * 12_000) + "。" + ("𠀀净利润" * 3_000)
    document = factories.add_document(version, ["前言。", page, "后记。"])
    chunks = list(document.chunks.order_by("ordinal"))
    assert len(chunks) > 3
    for chunk in chunks:
        assert 0 < utf16_len(chunk.text) <= MAX_CHUNK_UTF16
        assert utf16_slice(document.text, chunk.start, chunk.end) == chunk.text
    body = "".join(c.text for c in chunks if c.page == 2)
    assert body == page.replace(" ", "")


def test_a_chunk_digest_is_the_sha256_of_the_normalized_snippet(version):
    document = factories.add_document(version, ["  第一段\r\n续行  "])
    chunk = document.chunks.get()
    normalized = unicodedata.normalize("NFC", chunk.text).replace("\r\n", "\n").strip()
    assert chunk.digest == hashlib.sha256(normalized.encode()).hexdigest()
