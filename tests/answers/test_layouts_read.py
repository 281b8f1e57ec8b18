"""Layouts a filing's text takes that the reader once left unread (docs/extractive-provider.md,
"Structures understood"): a table whose header is not its first line or comes again after a
page break, a PDF table whose cells hold spaces, a list item wrapped where no punctuation
mark ends the line. Each on a document of its own, driven without a database
(tests/answers/reader.py)."""

from agents.providers.structure import units
from tests.answers.reader import answer, excerpt, not_found

LOGISTICS = "岚山物流股份有限公司 2026 年半年度报告"


def _rows(content: str) -> list[list[str]]:
    return [u.clauses for u in units(content) if u.kind == "row"]


def test_a_header_repeated_after_a_page_break_is_no_row_and_the_rows_after_it_keep_it():
    content = (
        "区域 | 仓储面积（万平方米） | 仓库出租率\n\n华东 | 30.1 | 90.5%\n\n"
        "区域 | 仓储面积（万平方米） | 仓库出租率\n\n华北 | 15.6 | 86.1%\n\n"
        "— 12 —\n\n西南 | 8.3 | 77.2%"
    )
    assert _rows(content) == [
        ["华东", "30.1", "90.5%"],
        ["华北", "15.6", "86.1%"],
        ["西南", "8.3", "77.2%"],
    ]
    table = excerpt(LOGISTICS, "表 3 分区域仓储网络\n\n" + content)
    first = answer("岚山物流西南区域仓储面积多少？", [table])[0]
    assert "西南（仓储面积（万平方米））：8.3" in first, first
    assert f"[[cite:{table['id']}]]" in first
    # a which question lists the rows once each, the repeated header none of them
    first = answer("岚山物流有哪些区域？", [table])[0]
    assert first.count("区域 | 仓储面积") == 1 and "西南 | 8.3" in first, first


def test_a_title_row_above_the_header_is_the_table_s_caption():
    # DOCX repeats a merged cell's text in each column it spans
    content = (
        "分区域仓储网络 | 分区域仓储网络 | 分区域仓储网络\n\n"
        "区域 | 仓储面积（万平方米） | 仓库出租率\n\n华东 | 30.1 | 90.5%\n\n华中 | 12.7 | 84.0%"
    )
    header = next(u for u in units(content) if u.kind == "header")
    assert header.clauses == ["区域", "仓储面积（万平方米）", "仓库出租率"]
    first = answer("岚山物流华中区域仓库出租率是多少？", [excerpt(LOGISTICS, content)])[0]
    assert "华中（仓库出租率）：84.0%" in first, first


def test_a_pdf_row_whose_label_holds_a_space_is_a_row_of_its_table():
    # ingestion writes the rows with as many cells as the header; a label set with a space
    # (华 北) has one cell more and stays as pypdf gave it
    content = (
        "区域 | 仓储面积 | 仓库出租率\n\n华东 | 30.1 | 90.5%\n\n华 北 15.6 86.1%\n\n西南 8.3 77.2%"
    )
    assert _rows(content)[1:] == [["华北", "15.6", "86.1%"], ["西南", "8.3", "77.2%"]]
    table = excerpt(LOGISTICS, content)
    first = answer("岚山物流华北区域仓库出租率是多少？", [table])[0]
    # the label read without the layout's space, the row quoted as written
    assert "华北（仓库出租率）：86.1%" in first and "华 北 15.6 86.1%" in first, first


def test_a_pdf_table_whose_header_cells_hold_spaces_is_read_as_a_table():
    content = (
        "报告期内公司仓储网络继续扩张。\n"
        "区域 仓储面积 （万平方米） 仓库 出租率\n"
        "华东 30.1 90.5%\n"
        "华中 12.7 84.0%\n"
        "第四节 风险提示"
    )
    header = next(u for u in units(content) if u.kind == "header")
    assert header.clauses == ["区域", "仓储面积（万平方米）", "仓库出租率"]
    first = answer("岚山物流华中区域仓储面积是多少？", [excerpt(LOGISTICS, content)])[0]
    assert "华中（仓储面积（万平方米））：12.7" in first, first
    # prose with spaces around its figures stays prose
    assert [u.kind for u in units("公司营业收入 86.3 亿元 同比增长 12.1 %")] == ["sentence"]


def test_an_item_wrapped_where_no_punctuation_ends_the_line_is_read_whole():
    content = (
        "第四节 风险提示\n公司面临的主要风险：\n"
        "1. 主要原材料环氧氯丙烷价格大幅波动可能推高\n生产成本并压缩毛利率。\n"
        "2. 出口以美元结算，汇率波动影响收益。"
    )
    (lst,) = [u for u in units(content) if u.kind == "list"]
    assert lst.clauses[0] == "1. 主要原材料环氧氯丙烷价格大幅波动可能推高生产成本并压缩毛利率。"
    # an item that is a title followed by its text keeps them apart
    titled = "1、原材料价格波动风险\n主要原材料价格波动较大，可能推高生产成本。\n2、汇率波动风险"
    (lst,) = [u for u in units(titled) if u.kind == "list"]
    assert lst.clauses == ["1、原材料价格波动风险", "2、汇率波动风险"]


def test_rows_whose_header_no_excerpt_holds_name_nothing():
    rest = excerpt(LOGISTICS, "西南 | 8.3 | 77.2%\n\n华北 | 15.6 | 86.1%")
    assert not_found(answer("岚山物流华北区域仓储面积多少？", [rest]))


def test_a_split_table_takes_the_header_its_document_s_excerpt_ends_with():
    # two tables of three columns in the header's excerpt: the rows go on the one it ends with
    head = excerpt(
        LOGISTICS,
        "表 2 分业务收入\n\n业务 | 收入（亿元） | 毛利率\n\n冷链仓储 | 31.4 | 24.0%\n\n"
        "表 3 分区域仓储网络\n\n区域 | 仓储面积（万平方米） | 仓库出租率\n\n华东 | 30.1 | 90.5%",
    )
    rest = excerpt(
        LOGISTICS, "西南 | 8.3 | 77.2%\n\n— 12 —\n\n华北 | 15.6 | 86.1%\n\n合计 | 53.9 | 87.0%"
    )
    first = answer("岚山物流华北区域仓库出租率是多少？", [rest, head])[0]
    assert f"表格：区域 | 仓储面积（万平方米） | 仓库出租率 [[cite:{head['id']}]]" in first, first
    assert "华北（仓库出租率）：86.1%" in first and f"[[cite:{rest['id']}]]" in first, first
