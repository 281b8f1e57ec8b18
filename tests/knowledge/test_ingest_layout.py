"""What ingestion keeps of a document's layout in its chunks: a section heading stays with
what it heads, and a typeset PDF table whose change column is written in words stays one
table (docs/ingest.md)."""

from knowledge.files import _pdf_tables
from knowledge.ingest import TARGET_CHUNK_UTF16, chunk_spans

FILLER = "公司经营情况稳定，各项业务有序推进，" * 22 + "不存在分歧。"  # 402 characters


def _chunks(pages: list[str]) -> list[str]:
    text, spans = chunk_spans(pages)
    return [text[span.start : span.end] for span in spans]


def test_a_heading_starts_the_chunk_of_what_it_heads_not_the_end_of_the_one_before():
    reasons = "1. 报告期内，车载光学组件需求快速增长；" + FILLER
    page = f"二、沟通情况\n\n{FILLER}\n\n三、业绩变动原因说明\n\n{reasons}"
    assert len(page) > TARGET_CHUNK_UTF16  # two chunks at least
    chunks = _chunks([page])
    assert not any(chunk.endswith("三、业绩变动原因说明") for chunk in chunks)
    assert any(chunk.startswith("三、业绩变动原因说明\n\n1. 报告期内") for chunk in chunks)
    # nothing lost, nothing twice
    assert sum(chunk.count("三、业绩变动原因说明") for chunk in chunks) == 1
    assert sum(chunk.count("车载光学组件") for chunk in chunks) == 1


def test_a_sentence_or_a_list_item_is_no_heading_to_move():
    page = f"{FILLER}\n\n一、本期业绩预计情况符合预期。\n\n{FILLER}"
    chunks = _chunks([page])
    assert any(chunk.endswith("一、本期业绩预计情况符合预期。") for chunk in chunks)


def test_a_pdf_table_row_whose_change_is_written_in_words_stays_in_the_table():
    page = (
        "项目 本年 上年 变动（%）\n"
        "原保险保费收入 186,432.57 172,908.14 7.82\n"
        "综合成本率（%） 97.6 98.9 下降 1.3 个百分点\n"
        "基本每股收益（元） 1.58 1.41 12.06\n"
        "第 1 页 共 4 页"
    )
    lines = _pdf_tables(page).split("\n")
    assert "综合成本率（%） | 97.6 | 98.9 | 下降 1.3 个百分点" in lines
    assert "基本每股收益（元） | 1.58 | 1.41 | 12.06" in lines
    assert "第 1 页 共 4 页" in lines  # the footer is no row


def test_more_figures_than_the_header_has_cells_are_not_joined_into_one():
    # a header of the period cells only, over rows of a label and four figures
    page = (
        "核心资本充足率 综合资本充足率 核心资本充足率 综合资本充足率\n"
        "集团合并 142.6 231.8 138.9 226.4\n"
        "澄平人寿 118.3 206.5 115.7 201.2"
    )
    assert _pdf_tables(page) == page
