"""Lists and tables asked whole: a row asked by all its figures (各项指标), … One test per
rule, each on a document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

PRODUCTS = excerpt(
    "澜汐电子股份有限公司 2025 年年度报告摘要",
    "## 二、分产品经营情况\n\n"
    "表 2 营业收入、营业成本及毛利率（按产品）\n\n"
    "产品 | 营业收入（亿元） | 营业成本（亿元） | 毛利率 | 毛利率比上年增减\n\n"
    "储能模组 | 52.4 | 40.1 | 23.5% | 增加 1.8 个百分点\n\n"
    "车载电源 | 31.7 | 25.9 | 18.3% | 减少 0.7 个百分点\n\n"
    "合计 | 84.1 | 66.0 | 21.5% | 增加 0.9 个百分点\n\n"
    "储能模组业务受益于海外大储项目交付，收入同比增长 21.6%；车载电源业务受价格竞争影响，"
    "收入同比下降 3.2%。",
)


# -- a row asked by all its figures -----------------------------------------------------------


def test_every_figure_of_a_row_is_its_whole_row():
    # 各项指标 / 各项数据 names no figure of its own: it asks everything the row named before
    # it says — the row quoted whole, not the prose about the segment, nor another row
    for question in ("澜汐电子储能模组的各项指标？", "澜汐电子车载电源各项数据是多少"):
        first = answer(question, [PRODUCTS])[0]
        row = (
            "储能模组 | 52.4 | 40.1 | 23.5% | 增加 1.8"
            if "储能" in question
            else ("车载电源 | 31.7 | 25.9 | 18.3% | 减少 0.7")
        )
        assert row in first, (question, first)
        assert "合计" not in first and "收入同比" not in first, (question, first)
    # a row the table does not have stays unanswered
    assert not_found(answer("澜汐电子光伏组件的各项指标？", [PRODUCTS]))


# -- the kind of the rows asked ---------------------------------------------------------------

SEGMENTS = excerpt(
    "岑屿保险集团股份有限公司 2026 年年度报告摘要",
    "四、分部经营情况\n\n单位：人民币百万元\n\n"
    "分部 | 营业收入 | 分部净利润 | 净利润同比变动（%）\n\n"
    "寿险 | 61,204.55 | 4,310.27 | 9.42\n\n"
    "财产险 | 22,817.90 | 1,506.33 | 12.05\n\n"
    "合计 | 84,022.45 | 5,816.60 | 10.28",
)


def test_a_segment_head_after_each_or_which_is_the_kind_of_the_rows():
    # 各分部 / 哪个分部 names no segment (分部营业收入 is no column): the rows of the label
    # column 分部, each of them or the one with the extreme value, and 营业收入 is asked of them
    first = answer("岑屿保险各分部营业收入分别是多少？", [SEGMENTS])[0]
    assert "寿险（营业收入）：61,204.55" in first and "财产险（营业收入）：22,817.90" in first, (
        first
    )
    first = answer("岑屿保险各分部的营业收入", [SEGMENTS])[0]
    assert "寿险（营业收入）：61,204.55" in first and "财产险（营业收入）：22,817.90" in first, (
        first
    )
    first = answer("岑屿保险哪个分部净利润同比变动最高？", [SEGMENTS])[0]
    assert first.count("财产险（净利润同比变动（%））：12.05") == 1, first
    assert "寿险（" not in first, first
    # a column the table does not have stays unanswered
    assert not_found(answer("岑屿保险各分部的保费收入分别是多少？", [SEGMENTS]))


# -- a column asked of every row of a table split over two excerpts ----------------------------

_SPLIT_TITLE = "岑屿保险集团股份有限公司 2026 年年度报告摘要"


def _located(result: dict, start: int, end: int) -> dict:
    result["sourceRef"] = {
        "type": "document",
        "id": "cenyu-2026",
        "page": 2,
        "locator": {"start": start, "end": end},
    }
    return result


def _split_table() -> list[dict]:
    head = _located(
        excerpt(
            _SPLIT_TITLE,
            "四、分部经营情况\n\n单位：人民币百万元\n\n"
            "分部 | 营业收入 | 分部净利润 | 净利润同比变动（%）\n\n"
            "寿险 | 61,204.55 | 4,310.27 | 9.42\n\n"
            "财产险 | 22,817.90 | 1,506.33 | 12.05",
        ),
        0,
        160,
    )
    tail = _located(
        excerpt(
            _SPLIT_TITLE,
            "资管 | 1,935.18 | 402.66 | 3.71\n\n合计 | 85,957.63 | 6,219.26 | 10.12\n\n"
            "注：分部净利润为归属于母公司股东的净利润。",
        ),
        162,
        260,
    )
    # retrieval ranks the table's tail, with its total, before its head
    return [tail, head]


def test_each_row_of_a_split_table_is_in_both_its_parts():
    # 各分部的营业收入: the column of every row, those of the head and of the tail, each
    # excerpt cited for its own rows — not the total alone, which the tail holds
    excerpts = _split_table()
    first = answer("岑屿保险各分部的营业收入分别是多少？", excerpts)[0]
    for row in (
        "寿险（营业收入）：61,204.55",
        "财产险（营业收入）：22,817.90",
        "资管（营业收入）：1,935.18",
    ):
        assert row in first, first
    assert first.index("寿险") < first.index("资管"), first
    assert "85,957.63" not in first, first
    for result in excerpts:
        assert f"[[cite:{result['id']}]]" in first, first


# -- the end of the year before is a balance date, not an annual report -----------------------

BALANCES = excerpt(
    "岑川精工股份有限公司 2026 年第三季度报告",
    "一、主要财务数据\n单位：万元  币种：人民币\n"
    "项目 本报告期 本报告期比上年同 年初至报告期末 年初至报告期末比上\n"
    " 期增减变动幅度(%) 年同期增减变动幅度(%)\n"
    "营业收入 61,204.18 11.30 170,336.52 9.84\n"
    " 本报告期末 上年度末 本报告期末比上年度末增减变动幅度(%)\n"
    "总资产 812,406.35 760,118.92 6.88\n"
    "归属于上市公司股东的所有者权益 401,552.70 388,914.06 3.25\n",
)


def test_the_end_of_the_year_before_is_a_column_of_a_quarterly_report():
    # 上年度末 (and 比上年度末) is the balance date a third-quarter report compares its period
    # end with: the column 上年度末 of the row asked — not an annual report the quarterly one
    # is not, nor a time cut short (上年度 + 末)
    first = answer("岑川精工总资产上年度末是多少？", [BALANCES])[0]
    assert "总资产（上年度末）：760,118.92" in first, first
    first = answer("岑川精工总资产比上年度末增长多少？", [BALANCES])[0]
    assert "6.88" in first and "760,118.92" in first, first
    assert "388,914.06" not in first, first
    # (a bank's half-year report writes the same date 上年末: the column of that date)
    first = answer("岑川银行资产总额上年度末是多少？", [BANK])[0]
    assert "资产总额（上年末）：668,214.90" in first, first


BANK = excerpt(
    "岑川银行股份有限公司 2026 年半年度报告摘要",
    "单位：人民币百万元\n\n项目 | 本期末 | 上年末 | 本期末比上年末增减(%)\n\n"
    "资产总额 | 712,508.63 | 668,214.90 | 6.63\n\n"
    "吸收存款总额 | 498,316.72 | 463,581.09 | 7.49",
)


# -- the rank of a row in a table split over two excerpts ---------------------------------------

_HOLDERS_TITLE = "岑港银行股份有限公司 2026 年半年度报告摘要"


def _holders() -> list[dict]:
    head = _located(
        excerpt(
            _HOLDERS_TITLE,
            "四、股东情况\n前十名股东持股情况\n单位：股\n\n"
            "股东名称 | 股东性质 | 持股比例(%) | 持股总数 | 质押或冻结\n\n"
            "岑港市财政局 | 国家 | 12.48 | 732,576,000 | 无\n\n"
            "岑港城市建设投资集团有限公司 | 国有法人 | 9.87 | 579,369,000 | 无",
        ),
        0,
        200,
    )
    tail = _located(
        excerpt(
            _HOLDERS_TITLE,
            "岑港集团有限公司 国有法人 7.65 449,055,000 质押 200,000,000\n"
            "香港中央结算有限公司 境外法人 3.12 183,144,000 无\n"
            "岑港交通投资控股有限公司 国有法人 2.86 167,882,000 无\n"
            "上述股东关联关系或一致行动的说明：本行未知股东之间是否存在关联关系。",
        ),
        202,
        400,
    )
    # retrieval ranks the table's tail before its head
    return [tail, head]


def test_the_rows_of_a_borrowed_header_rank_after_those_it_was_borrowed_from():
    # 第三大股东 is the third row of the table: the first of its tail, the head's two before
    # it — not the third row of the tail alone
    first = answer("岑港银行第三大股东是谁？", _holders())[0]
    assert "岑港集团有限公司" in first, first
    assert "岑港交通投资控股有限公司" not in first, first
    first = answer("岑港银行第四大股东是谁？", _holders())[0]
    assert "香港中央结算有限公司" in first and "岑港交通" not in first, first


# -- a rank by size picks from a ranked list or table only ------------------------------------

RANKED_HOLDERS = excerpt(
    "岑溪装备股份有限公司 2026 年第三季度报告",
    "二、股东信息\n"
    "（一）普通股股东总数和表决权恢复的优先股股东数量及前十名股东持股情况表\n"
    "单位：股\n"
    "前 10 名股东持股情况（不含通过转融通出借股份）\n"
    "股东名称 股东性质 持股数量 持股比例(%) 质押、标记或冻结\n"
    "岑溪控股集团有限公司 境内非国有法人 142,416,000 36.00 质押 12,000,000\n"
    "陈启明 境内自然人 31,648,000 8.00 无\n"
    "宁波岑远投资合伙企业（有限合伙） 其他 19,780,000 5.00 无\n"
    "上述股东关联关系或一致行动的说明：陈启明为岑溪控股集团有限公司的控股股东，\n"
    "宁波岑远投资合伙企业（有限合伙）为公司员工持股平台，二者与岑溪控股集团有限公司构成"
    "一致行动人。公司未知其他股东之间是否存在关联关系或属于一致行动\n"
    "人。\n",
)


def test_a_rank_by_size_is_not_the_clause_of_an_unranked_list():
    # 第二大股东 ranks by size: the second row of the top-ten table, not the second clause of
    # the note after it, a list neither numbered nor led by a top N
    first = answer("岑溪装备第二大股东是谁？", [RANKED_HOLDERS])[0]
    assert "陈启明 境内自然人 31,648,000 8.00" in first, first
    assert "未知其他股东" not in first, first


# -- a row outside the thing asked ---------------------------------------------------------------

NON_OPERATING = excerpt(
    "岑溪重工股份有限公司 2026 年第三季度报告",
    "（二）非经常性损益项目和金额\n单位：万元  币种：人民币\n\n"
    "非经常性损益项目 | 本期金额 | 年初至报告期末金额\n\n"
    "计入当期损益的政府补助 | 991.27 | 2,531.55\n\n"
    "其他营业外收入和支出 | -58.12 | -96.42",
)


def test_what_lies_outside_a_thing_is_not_that_thing():
    # 营业外收入 is income outside the operations: it does not state the 营业收入 asked, and
    # the table that has no row of revenue leaves the question unanswered
    blocks = answer("岑溪重工第三季度营业收入是多少？", [NON_OPERATING])
    assert not_found(blocks), blocks
    # (a statement writing both answers by the row of revenue)
    both = excerpt(
        "岑溪重工股份有限公司 2026 年第三季度报告",
        "利润表（节选）\n\n项目 | 本期金额 | 年初至报告期末金额\n\n"
        "营业外收入 | 58.12 | 96.42\n\n营业收入 | 128,645.32 | 352,918.06",
    )
    first = answer("岑溪重工营业收入年初至报告期末金额是多少？", [both])[0]
    assert "352,918.06" in first and "96.42" not in first, first


# -- an item of a list picked by its ordinal with 条 ----------------------------------------------

REASONS = excerpt(
    "岑川光学科技股份有限公司 2026 年度业绩预告",
    "三、业绩变动原因说明\n\n"
    "1. 报告期内，车载镜头模组需求快速增长，公司该类产品出货量同比增长约 62%；\n\n"
    "2. 公司墨西哥生产基地于 2026 年三季度全面投产，综合毛利率较上年同期提升约 1.8 个百分点；\n\n"
    "3. 报告期内，公司预计非经常性损益对净利润的影响金额约为 2,100 万元。",
)


def test_an_ordinal_with_tiao_picks_that_item_of_the_list():
    # 条 is the measure word of a list's items (第二条原因, 第三条风险) as 项 is: 第二条 picks
    # the item numbered 2, not the whole list, nor a phrase 第二条 the list must write
    first = answer("岑川光学业绩变动原因第二条是什么？", [REASONS])[0]
    assert "墨西哥生产基地" in first, first
    assert "车载镜头" not in first and "非经常性损益" not in first, first
