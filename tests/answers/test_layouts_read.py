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


QUARTER = "临川装备股份有限公司 2026 年第三季度报告"
# The main data as pypdf gives a typeset table: header cells wrapped onto a second line, a
# row label wrapped, values that state none (不适用), a second header over the same label
# column; then the top shareholders, a row label and a last cell set with spaces.
QUARTER_PAGE = (
    "一、主要财务数据\n单位：万元  币种：人民币\n"
    "项目 本报告期 本报告期比上年同 年初至报告期末 年初至报告期末比上\n"
    " 期增减变动幅度(%) 年同期增减变动幅度(%)\n"
    "营业收入 52,310.08 12.40 148,902.77 10.15\n"
    "归属于上市公司股东的扣除 4,120.55 9.80 11,087.31 8.02\n"
    "非经常性损益的净利润\n"
    "经营活动产生的现金流量净额 不适用 不适用 9,442.10 31.20\n"
    " 本报告期末 上年度末 本报告期末比上年度末增减变动幅度(%)\n"
    "总资产 402,115.60 377,020.44 6.66\n"
    "注：本报告期指本季度初至本季度末 3 个月期间。\n"
    "二、股东信息\n"
    "股东名称 股东性质 持股数量 持股比例(%) 质押、标记或冻结\n"
    "临川控股有限公司 境内非国有法人 88,200,000 35.28 质押 6,000,000\n"
    "陈远山 境内自然人 20,000,000 8.00 无\n"
    "临川 2025 年员工持股计划 其他 2,500,000 1.00 无\n"
    "全国社保基金四零一组合 其他 2,100,000 0.84 无\n"
)


def test_a_pdf_table_with_a_wrapped_header_and_row_label_is_read_as_a_table():
    by_label = {u.clauses[0]: u for u in units(QUARTER_PAGE) if u.kind == "row"}
    deducted = by_label["归属于上市公司股东的扣除非经常性损益的净利润"]
    assert deducted.clauses[1:] == ["4,120.55", "9.80", "11,087.31", "8.02"]
    # the wrapped header cell is completed by the word the document writes (同期, 上年)
    assert deducted.heading.split(" | ")[2] == "本报告期比上年同期增减变动幅度(%)"
    # a second header over the same label column heads the rows after it
    assert (
        by_label["总资产"].heading
        == " | 本报告期末 | 上年度末 | 本报告期末比上年度末增减变动幅度(%)"
    )
    # extra words are the label's, else the last cell's, as the other rows' columns hold
    assert by_label["临川 2025 年员工持股计划"].clauses[1:3] == ["其他", "2,500,000"]
    assert by_label["临川控股有限公司"].clauses[4] == "质押 6,000,000"
    assert "注：本报告期指本季度初至本季度末" not in " ".join(by_label)


def test_the_figures_of_a_spaced_pdf_table_answer_with_their_row():
    page = excerpt(QUARTER, QUARTER_PAGE)
    cited = f"[[cite:{page['id']}]]"
    for question, figure in (
        ("临川装备年初至报告期末扣非净利润是多少万元？", "11,087.31"),
        ("全国社保基金四零一组合持有临川装备多少股？", "2,100,000"),  # 持(有): linking verb
        ("临川控股有限公司持有临川装备的比例是多少？", "35.28"),
    ):
        first = answer(question, [page])[0]
        assert figure in first and cited in first, (question, first)
    # 员工 is the modifier of the 员工持股计划 row: no head count
    assert not_found(answer("临川装备有多少员工？", [page]))


def test_a_split_table_s_rows_each_stand_before_their_own_citation():
    head = excerpt(
        "汀源食品股份有限公司 2026 年半年度报告摘要",
        "（二）主要会计数据\n\n项目 | 本报告期 | 上年同期 | 本报告期比上年同期增减\n\n"
        "营业收入（元） | 1,846,371,522.18 | 1,543,068,974.35 | 19.66%",
    )
    rest = excerpt(
        head["title"],
        "经营活动产生的现金流量净额（元） | 305,219,337.91 | 198,774,105.63 | 53.55%\n\n"
        "基本每股收益（元/股） | 0.58 | 0.50 | 16.00%\n\n"
        " | 本报告期末 | 上年度末 | 本报告期末比上年度末增减\n\n"
        "总资产（元） | 4,982,113,460.27 | 4,537,920,118.55 | 9.79%",
    )
    first = answer("汀源食品经营活动现金流量净额本期和上年同期分别多少？", [rest, head])[0]
    # its row asked (本期 is a time): its columns, not every row of the table
    assert "305,219,337.91" in first and "198,774,105.63" in first, first
    assert "0.58" not in first and "4,982,113,460.27" not in first, first
    # the header cited to its excerpt, the row's figures then to theirs, no marker between
    figure = first.index("198,774,105.63")
    assert first.rindex(f"[[cite:{head['id']}]]") < figure < first.index(f"[[cite:{rest['id']}]]")


def test_a_caption_right_before_a_table_names_what_its_rows_are():
    # 前三大股东是哪些 over the table captioned 前 10 名股东…: its rows, read as a list
    page = excerpt(
        QUARTER,
        "二、股东信息\n单位：股\n前 10 名股东持股情况（不含通过转融通出借股份）\n"
        + QUARTER_PAGE.split("二、股东信息\n")[1],
    )
    first = answer("临川装备前三大股东是哪些？", [page])[0]
    for holder in ("临川控股有限公司", "陈远山"):
        assert holder in first, first


def test_an_enumeration_begun_inside_a_line_goes_on_over_the_next():
    content = (
        "公司提请投资者关注以下风险：（1）下游行业资本开支放缓，可能导致订单下降；\n"
        "（2）主要原材料价格波动，可能影响毛利率；（3）海外项目交付周期较长，\n"
        "且受汇率波动影响。"
    )
    (lst,) = [u for u in units(content) if u.kind == "list"]
    assert len(lst.clauses) == 3 and lst.clauses[2].endswith("且受汇率波动影响。"), lst.clauses
    # items one a line, each its own line, stay so
    lines = "主要风险：\n（1）资本开支放缓；\n（2）原材料价格波动；\n（3）汇率波动。"
    (lst,) = [u for u in units(lines) if u.kind == "list"]
    assert lst.text.split("\n")[0] == "主要风险：" and len(lst.clauses) == 3


def test_each_of_several_periods_is_a_column_of_the_row():
    note = excerpt(
        "临川装备（603999）2026 年三季报点评",
        "## 盈利预测\n\n指标 | 2025A | 2026E | 2027E\n\n"
        "EPS（元/股） | 1.06 | 1.27 | 1.55\n\nP/E（倍） | 28.2 | 23.5 | 19.3",
    )
    first = answer("临川装备2026年和2027年的PE分别是多少倍？", [note])[0]
    assert "23.5" in first and "19.3" in first and f"[[cite:{note['id']}]]" in first, first


def test_a_header_line_with_an_empty_label_inside_a_table_heads_the_rows_after_it():
    content = (
        "项目 | 本报告期 | 上年同期\n\n营业收入（元） | 1,846.18 | 1,543.35\n\n"
        " | 本报告期末 | 上年度末\n\n总资产（元） | 4,982.27 | 4,537.55"
    )
    assets = next(u for u in units(content) if u.kind == "row" and u.clauses[0] == "总资产（元）")
    assert assets.heading == " | 本报告期末 | 上年度末"


def test_a_cell_that_states_no_value_answers_no_figure():
    page = excerpt(QUARTER, QUARTER_PAGE)
    # 本报告期 of 经营活动产生的现金流量净额 is 不适用; the year-to-date growth is no amount
    assert not_found(answer("临川装备本报告期经营活动现金流量净额是多少？", [page]))
    first = answer("临川装备年初至报告期末经营活动现金流量净额是多少？", [page])[0]
    assert "9,442.10" in first, first


def test_one_thing_named_with_a_modifier_is_not_two_things_asked():
    page = excerpt(
        QUARTER,
        QUARTER_PAGE
        + "3. 经营活动产生的现金流量净额年初至报告期末同比增长 31.20%，主要系回款增加所致；",
    )
    # 经营活动产生 | 现金流量净额 are one phrase cut at 的: no sentence answers each half
    assert not_found(answer("临川装备第三季度经营活动产生的现金流量净额是多少？", [page]))


def test_a_pdf_row_whose_label_is_set_against_its_first_figure_is_a_row():
    content = (
        "非经常性损益项目 | 本期金额 | 年初至报告期末金额\n\n"
        "计入当期损益的政府补助 | 991.27 | 2,531.55\n\n"
        "除上述各项之外的其他营业外收入和支出-58.12 -96.42\n"
        "合计 1,047.13 2,745.19"
    )
    assert _rows(content)[1:] == [
        ["除上述各项之外的其他营业外收入和支出", "-58.12", "-96.42"],
        ["合计", "1,047.13", "2,745.19"],
    ]


def test_a_line_of_labelled_values_set_apart_by_bars_is_read_as_clauses_not_a_table_row():
    # a broker note's header line: each cell names its own figure; there is no table header
    line = "总股本：3.956 亿股 | 总市值：118.13 亿元 | 近 12 个月最高/最低价：33.42/21.05 元"
    assert [u.kind for u in units(line)] != ["row"]
    note = excerpt("松涛化工（603999）2026 年三季报点评", f"**投资评级：买入**\n\n{line}")
    assert "118.13" in answer("松涛化工的总市值是多少？", [note])[0]
