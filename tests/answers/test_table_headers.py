"""A table's rows and columns read as structure, each rule on a small document of its own
(docs/extractive-provider.md, "Tables"): a PDF table cut across two chunks whose later rows
ingestion left spaced, the line stating a table's unit, and the column a question names —
as a whole header term, past the row's own label, in the unit asked."""

from agents.providers.sources import read_sources
from agents.providers.structure import Unit, row_cell, units
from tests.answers.reader import answer, excerpt

TITLE = "松石银行股份有限公司 2026 年半年度报告摘要"
HOLDERS_HEADER = "股东名称 | 股东性质 | 持股比例(%) | 持股总数 | 质押或冻结"
HOLDERS = (
    "前十名股东持股情况\n单位：股\n\n"
    f"{HOLDERS_HEADER}\n\n"
    "松石市国资委 | 国家 | 15.02 | 812,300,000 | 无\n\n"
    "松石城投集团有限公司 | 国有法人 | 8.77 | 474,100,000 | 无"
)
# pypdf's lines of the same table's later rows: one a line, cells split by spaces, a row
# of six words (质押 200,000,000 is one cell), then the prose after the table
LATER_ROWS = (
    "石湾港务集团有限公司 国有法人 6.15 332,500,000 质押 120,000,000\n"
    "香港中央结算有限公司 境外法人 2.90 156,800,000 无\n"
    "松石交通投资有限公司 国有法人 2.35 127,050,000 无\n"
    "上述股东关联关系的说明：松石城投集团有限公司为松石市国资委控制的企业。"
)


def _rows(content: str) -> list[Unit]:
    return [u for u in units(content) if u.kind == "row"]


def test_rows_an_excerpt_begins_with_take_the_header_of_the_excerpt_their_table_began_in():
    first, later = read_sources(
        [
            {"id": "cite_a", "title": TITLE, "content": HOLDERS},
            {"id": "cite_b", "title": TITLE, "content": LATER_ROWS},
        ]
    )
    rows = [u for u in later.units if u.kind == "row"]
    assert [r.clauses[0] for r in rows] == [
        "石湾港务集团有限公司",
        "香港中央结算有限公司",
        "松石交通投资有限公司",
    ]
    assert all(r.header_from == first.id and r.heading == HOLDERS_HEADER for r in rows)
    assert rows[0].clauses[4] == "质押 120,000,000"
    assert later.units[-1].kind == "sentence"  # the prose after the table stays prose


def test_a_spaced_row_right_after_a_tables_rows_goes_on_the_table():
    # ingestion writes rows as `a | b` until one has more words than the header has cells
    content = f"{HOLDERS}\n\n{LATER_ROWS}"
    pledged = _rows(content)[2]
    assert pledged.heading == HOLDERS_HEADER
    assert pledged.clauses == [
        "石湾港务集团有限公司",
        "国有法人",
        "6.15",
        "332,500,000",
        "质押 120,000,000",
    ]


def test_the_line_stating_a_tables_unit_is_not_its_caption():
    header = next(u for u in units(HOLDERS) if u.kind == "header")
    assert header.heading == "前十名股东持股情况\n单位：股"


def test_a_phrase_gluing_the_rows_label_to_a_columns_word_asks_that_column():
    pledged = _rows(f"{HOLDERS}\n\n{LATER_ROWS}")[2]
    # 石湾港务质押了多少股: the label writes 石湾港务, what is left asks the column
    assert pledged.heading.split(" | ")[row_cell(pledged, ("石湾港务质押", "股"))] == "质押或冻结"


def test_a_measure_asked_is_not_stated_by_a_column_bracketing_another_unit():
    holder = _rows(HOLDERS)[1]
    # 松石城投持有多少股: 持股比例(%) writes 股 but counts in percent
    assert holder.heading.split(" | ")[row_cell(holder, ("松石城投", "股"))] == "持股总数"


def test_a_header_term_inside_another_does_not_take_its_column():
    # a DOCX merged cell repeated over 非并表 | 并表: 并表 is inside 非并表
    content = "项目 | 本期末 | 本期末\n\n | 非并表 | 并表\n\n资本充足率 | 13.05 | 13.28"
    (ratio,) = _rows(content)
    assert ratio.clauses[row_cell(ratio, ("资本充足率", "本期末", "并表"))] == "13.28"
    assert ratio.clauses[row_cell(ratio, ("资本充足率", "本期末", "非并表"))] == "13.05"


CAPITAL = (
    "项目 | 本期末 | 上年末\n\n核心一级资本充足率 | 9.42 | 9.61\n\n"
    "一级资本充足率 | 10.87 | 11.12\n\n资本充足率 | 13.28 | 13.54"
)


def test_a_row_label_inside_the_one_asked_does_not_answer_with_it():
    first = answer("松石银行一级资本充足率本期末是多少？", [excerpt(TITLE, CAPITAL)])[0]
    assert "一级资本充足率（本期末）：10.87" in first, first
    assert "13.28" not in first and "9.42" not in first, first


def test_two_rows_named_one_inside_the_other_answer_together():
    first = answer(
        "松石银行一级资本充足率和资本充足率本期末分别是多少？", [excerpt(TITLE, CAPITAL)]
    )[0]
    assert "10.87" in first and "13.28" in first and "9.42" not in first, first


def test_a_pdf_header_cell_spans_the_lower_labels_up_to_where_they_start_over():
    # pypdf's lines: three columns under 本期末, two under 上年末
    content = (
        "项目 本期末 上年末\n 金额 占比 比上年末增减 金额 占比\n"
        "公司贷款 241,793 62.6 9.9 220,012 62.3\n个人贷款 121,856 31.5 8.4 112,415 31.9"
    )
    personal = _rows(content)[1]
    assert personal.clauses[row_cell(personal, ("个人贷款", "上年末", "占比"))] == "31.9"
    assert personal.clauses[row_cell(personal, ("个人贷款", "本期末", "比上年末增减"))] == "8.4"


def test_a_top_n_count_asked_who_is_answered_by_the_ranked_tables_rows():
    third = "石湾港务集团有限公司 | 国有法人 | 6.15 | 332,500,000 | 质押 120,000,000"
    first = answer("松石银行前三大股东是谁？", [excerpt(TITLE, f"{HOLDERS}\n\n{third}")])[0]
    assert all(n in first for n in ("松石市国资委", "松石城投集团有限公司", "石湾港务集团")), first


def test_a_table_cut_across_two_chunks_is_one_list_each_part_cited_to_its_excerpt():
    head, rest = excerpt(TITLE, HOLDERS), excerpt(TITLE, LATER_ROWS)
    first = answer("松石银行前三大股东是谁？", [head, rest])[0]
    assert first.index("松石城投集团有限公司") < first.index(f"[[cite:{head['id']}]]"), first
    assert f"[[cite:{head['id']}]]" in first.split("石湾港务集团有限公司")[0], first
    assert first.rstrip().endswith(f"[[cite:{rest['id']}]]"), first


def test_the_label_columns_header_names_the_rows_not_a_column():
    # 股票 is what the rows are (股票名称), not a column the cell asked must state
    fund = "松石成长混合型证券投资基金 2026 年第三季度报告"
    table = (
        "序号 | 股票代码 | 股票名称 | 占基金资产净值比例（%）\n\n"
        "1 | 600101 | 石湾电力 | 3.10\n\n2 | 600202 | 松岭医药 | 5.20\n\n3 | 600303 | 青岗银行 | 4.40"
    )
    first = answer("松石成长混合占基金资产净值比例最高的股票是哪只？", [excerpt(fund, table)])[0]
    assert "松岭医药（占基金资产净值比例（%））：5.20" in first and "石湾电力" not in first, first


def test_a_title_cell_over_two_share_classes_names_both_columns_under_it():
    # a DOCX header whose period cell spans two columns, the second left empty, over a
    # second line naming the share classes under an empty label cell
    content = (
        "主要财务指标 | 报告期（2026 年 7 月 1 日—2026 年 9 月 30 日） | \n\n"
        " | 松石成长混合 A | 松石成长混合 C\n\n5.期末基金份额净值 | 1.2846 | 1.2612"
    )
    (nav,) = _rows(content)
    period = "报告期（2026 年 7 月 1 日—2026 年 9 月 30 日）"
    assert nav.heading.split(" | ")[1:] == [f"{period}松石成长混合 A", f"{period}松石成长混合 C"]


def test_a_row_label_wrapped_onto_a_line_of_its_own_is_read_with_its_row():
    # ingestion writes the PDF's rows as `a | b`; the label's wrapped rest stays a line
    content = (
        "项目 | 本期末 | 上年末\n\n资产总额 | 712,508.63 | 668,214.90\n\n"
        "归属于本行普通股股东的 | 8.41 | 8.13\n每股净资产（元）\n\n（二）资产质量"
    )
    per_share = _rows(content)[1]
    assert per_share.clauses[0] == "归属于本行普通股股东的每股净资产（元）"
    assert per_share.text.endswith("\n每股净资产（元）")
    assert units(content)[-1].kind == "heading"


def test_a_pdf_row_whose_extra_words_fall_in_its_label_and_its_last_cell_is_a_row():
    # pypdf's lines: a holder's name set with spaces and a pledge of two words in one row
    content = (
        "股东名称 股东性质 持股数量 持股比例(%) 质押、标记或冻结\n"
        "石湾控股集团有限公司 境内非国有法人 142,416,000 36.00 无\n"
        "沈启明 境内自然人 31,648,000 8.00 无\n"
        "石湾智能 2025 年员工持股计划 其他 3,164,800 0.80 质押 1,000,000"
    )
    plan = _rows(content)[2]
    assert plan.clauses == [
        "石湾智能 2025 年员工持股计划",
        "其他",
        "3,164,800",
        "0.80",
        "质押 1,000,000",
    ]


def test_rows_an_excerpt_begins_with_under_a_pages_running_header_take_the_header():
    running = "松石银行股份有限公司                    2026 年半年度报告摘要\n\n"
    first, later = read_sources(
        [
            {"id": "cite_a", "title": TITLE, "content": HOLDERS},
            {"id": "cite_b", "title": TITLE, "content": running + LATER_ROWS},
        ]
    )
    rows = [u for u in later.units if u.kind == "row"]
    assert [r.clauses[0] for r in rows][:1] == ["石湾港务集团有限公司"] and len(rows) == 3
    assert all(r.header_from == first.id for r in rows)
