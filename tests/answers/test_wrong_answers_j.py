"""Cited wrong answers, worse than "not found": a list written as a section's sibling
headings, a table's rows of the kind asked, a superlative over the members of a class.
One test per rule, each on a document of its own (not the sets' fixtures), driven without a
database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

# -- a section's sibling headings are one list -----------------------------------------------

BOARD = "青禾材料股份有限公司第三届董事会第五次会议决议公告"
BOARD_FIRST = excerpt(
    BOARD,
    "一、董事会会议召开情况\n\n"
    "本次会议于 2027 年 8 月 20 日以现场方式召开，应出席董事 7 人，实际出席董事 7 人。\n\n"
    "二、董事会会议审议情况\n\n"
    "（一）审议通过《关于 2027 年半年度报告及其摘要的议案》\n\n"
    "表决结果：同意 7 票，反对 0 票，弃权 0 票。\n\n"
    "（二）审议通过《关于选举董事会专门委员会委员的议案》\n\n"
    "同意选举审计委员会委员：严松先生（召集人）、沈蓓女士；战略委员会委员：陆川先生、沈蓓女士。\n\n"
    "表决结果：同意 7 票，反对 0 票，弃权 0 票。",
)
BOARD_SECOND = excerpt(
    BOARD,
    "（三）审议通过《关于续聘会计师事务所的议案》\n\n"
    "同意续聘立衡会计师事务所为公司 2027 年度审计机构。\n\n"
    "表决结果：同意 7 票，反对 0 票，弃权 0 票。\n\n"
    "三、备查文件\n\n"
    "1. 第三届董事会第五次会议决议；\n"
    "2. 独立董事意见。",
)


def test_sibling_headings_over_two_excerpts_are_counted_as_one_list():
    # （一）…（三） under 二、…, closed by 三、: every resolution, not the committee list
    for question in ("青禾材料董事会审议通过了几项议案？", "青禾材料董事会审议通过了哪些议案"):
        first = answer(question, [BOARD_FIRST, BOARD_SECOND])[0]
        assert "半年度报告" in first and "专门委员会" in first and "续聘会计师" in first, first
        assert "严松" not in first, first


def test_sibling_headings_with_one_missing_are_no_list():
    # （二） not retrieved: the run is not whole, so it is not quoted as the list
    first = answer(
        "青禾材料董事会审议通过了几项议案？",
        [
            excerpt(
                BOARD,
                "二、董事会会议审议情况\n\n（一）审议通过《关于 2027 年半年度报告及其摘要的议案》\n\n"
                "表决结果：同意 7 票，反对 0 票，弃权 0 票。",
            ),
            BOARD_SECOND,
        ],
    )[0]
    assert not ("半年度报告" in first and "续聘会计师" in first), first


def test_a_document_outline_is_no_list_of_what_one_section_names():
    # 一、…四、 are the notice's sections: 原因 asked is the list under 三、, not the outline
    forecast = excerpt(
        "青禾材料股份有限公司 2027 年年度业绩预告",
        "一、本期业绩预计情况\n\n预计 2027 年度归母净利润 3.2 亿元至 3.6 亿元。\n\n"
        "二、与会计师事务所沟通情况\n\n本次业绩预告未经注册会计师审计。\n\n"
        "三、业绩变动原因说明\n\n1. 新能源材料订单快速增长；\n2. 海外基地投产，规模效应显现。\n\n"
        "四、风险提示\n\n本次业绩预告为初步测算结果。\n\n青禾材料股份有限公司董事会",
    )
    first = answer("青禾材料业绩预增的原因有哪些？", [forecast])[0]
    assert "订单快速增长" in first and "海外基地" in first, first
    assert "沟通情况" not in first, first


# -- a table's rows of the kind asked ---------------------------------------------------------

HOLDERS = "松岩农村商业银行股份有限公司 2027 年半年度报告摘要"
HOLDERS_FIRST = excerpt(
    HOLDERS,
    "前十名股东持股情况\n单位：股\n\n"
    "股东名称 | 股东性质 | 持股比例(%) | 持股总数 | 质押或冻结\n\n"
    "松岩市国资委 | 国家 | 15.20 | 800,000,000 | 无\n\n"
    "松岩城投集团有限公司 | 国有法人 | 8.10 | 420,000,000 | 无",
)
HOLDERS_SECOND = excerpt(
    HOLDERS,
    "松岩港务集团有限公司 国有法人 6.50 340,000,000 质押 100,000,000\n"
    "香港中央结算有限公司 境外法人 3.00 150,000,000 无\n"
    "松岩交通投资有限公司 国有法人 2.10 110,000,000 无\n"
    "北岙机电股份有限公司 境内非国有法人 1.90 99,000,000 冻结 99,000,000\n"
    "上述股东关联关系的说明：未知。",
)


def test_which_rows_are_of_a_kind_their_cells_state_over_a_split_typeset_table():
    first = answer("松岩农商行前十大股东里哪些是国有法人？", [HOLDERS_FIRST, HOLDERS_SECOND])[0]
    for holder in ("松岩城投", "松岩港务", "松岩交通"):
        assert holder in first, first
    # 国家 and 境内非国有法人 are other kinds
    for other in ("松岩市国资委", "北岙机电", "香港中央结算"):
        assert other not in first, first


def test_which_rows_naming_no_kind_are_the_table_whole():
    first = answer("松岩农商行前十大股东有哪些？", [HOLDERS_FIRST, HOLDERS_SECOND])[0]
    for holder in ("松岩市国资委", "松岩城投", "松岩港务", "北岙机电"):
        assert holder in first, first


def test_a_kind_no_row_is_of_is_not_the_table_whole():
    blocks = answer("松岩农商行前十大股东里哪些是外资法人？", [HOLDERS_FIRST, HOLDERS_SECOND])
    assert not_found(blocks) or "松岩城投" not in blocks[0], blocks[0]


# -- a superlative over a kind compares every member -----------------------------------------

SECTOR = "岭东证券：2027 年中报综述——三家券商业绩分化"
SECTOR_VIEW = excerpt(
    SECTOR,
    "## 核心观点\n\n上半年覆盖的三家券商营收增速分化，ROE 整体回升。\n\n"
    "## 重点公司估值表\n\n公司 | 代码 | 评级 | 目标价（元）\n\n"
    "明川证券 | 601111 | 买入 | 12.20\n\n海澄证券 | 601222 | 增持 | 8.80\n\n"
    "远岫证券 | 601333 | 中性 | 5.60",
)
SECTOR_COMPANIES = excerpt(
    SECTOR,
    "## 明川证券：经纪领先\n\n上半年营收同比增长 8.10%，ROE 为 9.20%，同比提升 0.40 个百分点。\n\n"
    "## 海澄证券：投行承压\n\n上半年营收同比下降 3.30%；ROE 6.10%。\n\n"
    "## 远岫证券：自营改善\n\n上半年营收同比增长 2.20%，ROE 为 4.80%。",
)


def test_a_superlative_over_a_kind_compares_every_member_section():
    # 券商 names no one broker: each section's figure is quoted and the lowest named
    first = answer("三家券商中谁的ROE最低？", [SECTOR_VIEW, SECTOR_COMPANIES])[0]
    for figure in ("9.20%", "6.10%", "4.80%"):
        assert figure in first, first
    verdict = first[first.rindex("[[cite:") :]
    assert "远岫证券最低" in verdict and "明川" not in verdict, first
    first = answer("哪家券商的ROE最高", [SECTOR_VIEW, SECTOR_COMPANIES])[0]
    verdict = first[first.rindex("[[cite:") :]
    assert "明川证券最高" in verdict, first


def test_a_member_stating_no_figure_is_said_so_and_left_out():
    companies = excerpt(
        SECTOR,
        "## 明川证券：经纪领先\n\n上半年 ROE 为 9.20%。\n\n"
        "## 海澄证券：投行承压\n\n上半年营收同比下降 3.30%。\n\n"
        "## 远岫证券：自营改善\n\n上半年 ROE 为 4.80%。",
    )
    first = answer("三家券商中谁的ROE最低？", [SECTOR_VIEW, companies])[0]
    verdict = first[first.rindex("[[cite:") :]
    assert "远岫证券最低" in verdict and "海澄证券" in verdict, first


def test_a_measure_no_member_states_is_not_found():
    assert not_found(answer("三家券商中谁的净息差最低？", [SECTOR_VIEW, SECTOR_COMPANIES]))


# -- a heading asked is answered by its section whole -----------------------------------------

NOTE = "岭东证券：溪石电子（688123）深度报告：国产替代加速"


def test_a_heading_asked_takes_the_clauses_under_it_whole():
    # 风险提示 / …；…；…。 is a list written as one sentence: asked by its heading, every
    # clause answers, not the last one
    risks = excerpt(
        NOTE,
        "风险提示\n\n下游需求复苏不及预期；新品导入进度低于预期；原材料价格大幅波动。",
    )
    first = answer("溪石电子的风险提示是什么", [risks])[0]
    for risk in ("下游需求", "新品导入", "原材料价格"):
        assert risk in first, first


def test_a_figure_asked_under_a_heading_is_still_its_clause():
    forecast = excerpt(
        NOTE,
        "盈利预测\n\n我们预计公司 2027 年营业收入 12.50 亿元；归母净利润 2.10 亿元；EPS 为 1.05 元。",
    )
    first = answer("溪石电子盈利预测的归母净利润是多少？", [forecast])[0]
    assert "2.10" in first and "12.50" not in first, first


GRANTS = excerpt(
    "青溪软件股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "激励对象获授的限制性股票分配情况\n\n"
    "姓名 | 职务 | 获授数量（万股） | 占授予总量的比例\n\n"
    "严朔 | 董事长 | 30.00 | 10.00%\n\n"
    "陆棠 | 副总经理 | 12.00 | 4.00%\n\n"
    "钟逸 | 董事会秘书 | 8.00 | 2.67%\n\n"
    "核心技术骨干（93 人） | — | 250.00 | 83.33%",
)


def test_rows_of_either_kind_coordinated_are_listed():
    # 董事和高管 asks the rows of either kind, not only those of both
    first = answer("青溪软件激励对象里的董事和高管都有谁？", [GRANTS])[0]
    for person in ("严朔", "陆棠", "钟逸"):
        assert person in first, first
    assert "核心技术骨干" not in first, first
