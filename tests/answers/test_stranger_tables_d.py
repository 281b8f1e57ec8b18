"""Tables and lists a stranger's questions ask of in their own words: the table states the
thing, the question words it otherwise (分红 over a 权益分派 notice, 哪天 before the act
asked the date of…). One test per rule, each on a document of its own (not the sets'
fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

NOTICE = excerpt(
    "松岭机电股份有限公司 2026 年年度权益分派实施公告",
    "## 重要内容提示：\n\n"
    "每股分配比例：A 股每股现金红利 0.28 元（含税）\n\n"
    "相关日期：\n\n"
    "股份类别 | 股权登记日 | 除权（息）日 | 现金红利发放日\n\n"
    "A 股 | 2027/6/11 | 2027/6/12 | 2027/6/13\n\n"
    "## 三、分配实施办法\n\n"
    "1. 公司控股股东的现金红利由公司自行发放。",
)


# -- a dividend's dates ---------------------------------------------------------------------


def test_a_dividend_is_what_a_distribution_notice_implements():
    # 分红 is the notice's 权益分派: the date row answers under the notice's title
    first = answer("松岭机电这次分红的股权登记日是哪天？", [NOTICE])[0]
    assert "2027/6/11" in first, first
    assert f"[[cite:{NOTICE['id']}]]" in first, first


def test_a_date_asked_before_its_act_asks_the_date_of_the_act():
    # 哪天 is a question word (not 哪 and a 天 glued to 发放): the column of the act's date
    first = answer("松岭机电现金红利哪天发放？", [NOTICE])[0]
    assert "现金红利发放日）：2027/6/13" in first, first
    assert f"[[cite:{NOTICE['id']}]]" in first, first


# -- rows compared ----------------------------------------------------------------------------

PRODUCTS = excerpt(
    "青禾食品股份有限公司 2026 年半年度报告",
    "## 三、主营业务分析\n\n"
    "分产品 | 营业收入（万元） | 毛利率 | 毛利率比上年同期增减\n\n"
    "冷冻汤圆 | 61,204.18 | 31.26% | 减少 0.84 个百分点\n\n"
    "速冻水饺 | 48,930.55 | 22.47% | 增加 1.12 个百分点\n\n"
    "合计 | 110,134.73 | 27.35% | 增加 0.08 个百分点\n\n"
    "速冻水饺收入同比增长 18.6%，主要系商超渠道放量；冷冻汤圆毛利率同比下降 0.84 个百分点，"
    "主要系糯米采购成本上升。",
)


def test_a_level_asked_is_not_answered_by_a_sentence_of_its_changes():
    # 哪个毛利率更高 asks the margins: the sentence gives their changes only (同比下降 0.84
    # 个百分点), the rows give the margins
    first = answer("青禾食品冷冻汤圆和速冻水饺，哪个毛利率更高？分别多少？", [PRODUCTS])[0]
    assert "31.26" in first and "22.47" in first, first
    assert "18.6" not in first, first
    assert f"[[cite:{PRODUCTS['id']}]]" in first, first
    # a change asked is still answered by the sentence that writes it
    changed = answer("青禾食品速冻水饺收入同比增长多少？", [PRODUCTS])[0]
    assert "18.6" in changed, changed


def test_a_one_character_light_head_stays_on_a_name_the_excerpts_write_whole():
    # 速冻面点 is a product the report writes whole, not 速冻面 with a light head 点 (风险点
    # asks the 风险): the row of 速冻面条 does not answer it
    noodles = excerpt(
        "汀兰食品股份有限公司 2026 年半年度报告",
        "分产品 | 营业收入（万元） | 毛利率\n\n"
        "速冻面条 | 9,107.48 | 23.70%\n\n"
        "速冻汤圆 | 18,426.35 | 34.01%\n\n"
        "报告期内，公司速冻面点产线完成改造。",
    )
    assert not_found(answer("汀兰食品速冻面点的毛利率是多少？", [noodles]))
    assert "23.70" in answer("汀兰食品速冻面条的毛利率是多少？", [noodles])[0]


# -- a name glossed in brackets -------------------------------------------------------------

HOLDERS = excerpt(
    "岚川电子股份有限公司 2026 年第三季度报告",
    "前十名股东持股情况\n\n"
    "股东名称 | 股东性质 | 持股数量 | 持股比例(%)\n\n"
    "岚川控股集团有限公司 | 境内非国有法人 | 120,450,000 | 30.11\n\n"
    "香港中央结算有限公司 | 境外法人 | 6,318,902 | 1.58",
)


def test_a_name_glossed_in_brackets_is_asked_by_the_gloss_the_document_writes():
    # 北向资金 is the question's name for 香港中央结算, which the holders' table writes
    first = answer("北向资金（香港中央结算）持有岚川电子多少股？", [HOLDERS])[0]
    assert "6,318,902" in first and "120,450,000" not in first, first
    assert f"[[cite:{HOLDERS['id']}]]" in first, first
    # a gloss the document does not write is no answer of its own
    assert not_found(answer("北向资金（沪股通）持有岚川电子多少股？", [HOLDERS]))


# -- a segment named in an analyst's words --------------------------------------------------

SEGMENTS = excerpt(
    "临澜保险集团股份有限公司 2026 年年度报告摘要",
    "四、分部经营情况\n\n"
    "分部 | 营业收入 | 分部净利润\n\n"
    "寿险 | 98,216.40 | 6,408.72\n\n"
    "财产险 | 27,903.18 | 1,826.45\n\n"
    "合计 | 126,119.58 | 8,235.17",
)


def test_a_segment_is_named_by_its_abbreviation_and_board():
    # 产险 is 财产险; a 板块 is the report's 分部
    first = answer("临澜保险产险板块的分部净利润是多少？", [SEGMENTS])[0]
    assert "1,826.45" in first and "6,408.72" not in first, first
    assert f"[[cite:{SEGMENTS['id']}]]" in first, first


# -- a year's end, and two figures of one row ----------------------------------------------

SOLVENCY = excerpt(
    "临澜保险集团股份有限公司 2026 年年度报告摘要",
    "三、偿付能力\n\n"
    "公司 | 核心偿付能力充足率 | 综合偿付能力充足率\n\n"
    "集团合并 | 152.4 | 228.1\n\n"
    "临澜人寿 | 121.7 | 204.3",
)

ASSETS = excerpt(
    "临澜保险集团股份有限公司 2026 年年度报告摘要",
    "（四）投资资产\n\n"
    "投资品种 | 期末账面价值 | 占比（%） | 上年末占比（%）\n\n"
    "定期存款 | 88,317.42 | 8.62 | 9.31\n\n"
    "股票 | 86,205.31 | 8.45 | 7.92\n\n"
    "合计 | 1,020,544.37 | 100.00 | 100.00",
)


def test_a_year_s_end_is_a_time_not_a_topic():
    # 年末 is the balance's date (like 年底), not a word 合并口径年末 the table must write
    first = answer("临澜保险集团合并口径年末的核心偿付能力充足率是多少？", [SOLVENCY])[0]
    assert "集团合并（核心偿付能力充足率）：152.4" in first, first
    assert f"[[cite:{SOLVENCY['id']}]]" in first, first


def test_two_figures_asked_of_a_row_are_each_one_column_s():
    # 账面价值 and 比例 are two columns: each states its own, the row answers both
    first = answer("临澜保险年末股票投资的账面价值是多少，占投资资产的比例多少？", [ASSETS])[0]
    assert "86,205.31" in first and "8.45" in first, first
    assert f"[[cite:{ASSETS['id']}]]" in first, first
    # 年末 asks the year's end: not the column of the year before's (上年末占比)
    assert "（上年末占比（%））" not in first, first
    assert "股票（期末账面价值）：86,205.31" in first, first


# -- a column of years names the rows -------------------------------------------------------

TARGETS = excerpt(
    "松岭科技股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 六、公司层面业绩考核要求\n\n"
    "以 2026 年营业收入、净利润为基数，各年度业绩考核目标如下：\n\n"
    "解除限售期 | 考核年度 | 营业收入增长率（A） | 净利润增长率（B）\n\n"
    "第一个解除限售期 | 2027 年 | 不低于 18% | 不低于 12%\n\n"
    "第二个解除限售期 | 2028 年 | 不低于 39% | 不低于 27%",
)


def test_a_column_of_years_is_the_row_s_period_not_a_column_asked():
    # 2028年 is the row's year (考核年度 | 2028 年), and 考核 of 考核要求 is the caption's,
    # not the year column's: the revenue column answers
    first = answer("松岭科技股权激励2028年的营收增长率考核要求是多少？", [TARGETS])[0]
    assert "（营业收入增长率（A））：不低于 39%" in first, first
    assert f"[[cite:{TARGETS['id']}]]" in first, first


# -- the top N rows by a column -------------------------------------------------------------

GRANTS = excerpt(
    "松岭科技股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 三、激励对象的范围及分配\n\n"
    "姓名 | 职务 | 获授的限制性股票数量（万股） | 占授予限制性股票总数的比例\n\n"
    "闻溪 | 董事、总经理 | 30.00 | 10.00%\n\n"
    "柏舟 | 财务总监 | 18.00 | 6.00%\n\n"
    "林樾 | 副总经理 | 12.00 | 4.00%",
)
GRANTS_GO_ON = excerpt(
    GRANTS["title"],
    "沈砚 | 董事会秘书 | 10.00 | 3.33%\n\n"
    "核心技术（业务）骨干（96 人） | — | 230.00 | 76.67%\n\n"
    "合计 | — | 300.00 | 100.00%",
)


def test_the_top_n_of_a_kind_are_its_rows_with_the_highest_values_in_every_part():
    # 最多的三位高管: the three 高管 rows (by their 职务) with the most shares, ranked over
    # both parts of a table split across two excerpts — not the 骨干 row, not the total
    first = answer("松岭科技获授股数最多的三位高管是谁？", [GRANTS_GO_ON, GRANTS])[0]
    for name in ("闻溪", "柏舟", "林樾"):
        assert name in first, first
    for other in ("沈砚", "骨干", "合计"):
        assert other not in first, first
    assert f"[[cite:{GRANTS['id']}]]" in first, first


INVESTMENTS = excerpt(
    "临澜保险集团股份有限公司 2026 年年度报告摘要",
    "（四）投资资产\n\n"
    "投资品种 | 期末账面价值 | 占比（%）\n\n"
    "定期存款 | 88,317.42 | 8.62\n\n"
    "债券投资 | 642,516.87 | 62.71\n\n"
    "其中：国债 | 303,128.60 | 29.59",
)
INVESTMENTS_GO_ON = excerpt(
    INVESTMENTS["title"],
    "股票 | 86,205.31 | 8.41\n\n证券投资基金 | 48,719.64 | 4.75\n\n合计 | 1,024,544.37 | 100.00",
)


def test_a_top_n_by_a_measure_ranks_the_rows_each_cited_to_its_excerpt():
    # 占比前三 ranks the rows by 占比 over the table's two parts; a 其中 row is a part of the
    # row above it, not one more kind
    first = answer("临澜保险投资资产里占比前三的品种是哪些？", [INVESTMENTS, INVESTMENTS_GO_ON])[0]
    for kind in ("债券投资", "定期存款", "股票"):
        assert kind in first, first
    assert "国债" not in first and "证券投资基金" not in first, first
    assert f"股票（占比（%））：8.41 [[cite:{INVESTMENTS_GO_ON['id']}]]" in first, first
    assert f"[[cite:{INVESTMENTS['id']}]]" in first, first
