"""A stranger's questions over filings (an insurer's annual summary, a results forecast, an
incentive plan) that the reader refused or answered in part: a row named with its kind, a
table split over two excerpts asked for each row, two names asked apart of one sentence, a
figure forecast, a notice's number, a heading naming two things — and the guard of a
qualifier joined across two words. One test per rule, each on a document of its own (not
the sets' fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

GROUP = "汀澄保险集团股份有限公司 2026 年年度报告摘要"


def _head(first: str) -> str:
    return first.split("**依据**")[0]


# -- a row named by its name and its kind ------------------------------------------------------

SEGMENTS = excerpt(
    GROUP,
    "## 四、分部经营情况\n\n"
    "单位：人民币百万元\n\n"
    "分部 | 营业收入 | 分部净利润 | 净利润同比变动（%） | 分部资产总额\n\n"
    "寿险 | 91,204.66 | 7,318.20 | 12.44 | 802,117.35\n\n"
    "财产险 | 28,415.09 | 1,906.73 | 5.18 | 52,604.91\n\n"
    "资管 | 2,147.52 | 611.08 | 3.02 | 7,415.26\n\n",
)


def test_a_row_named_with_its_kind_is_that_row():
    # 寿险分部营业收入: 寿险 is the row, 分部 what the rows are (the label column's header),
    # 营业收入 the column — though 分部 also begins 分部净利润's header
    first = answer("汀澄保险寿险分部营业收入是多少？", [SEGMENTS])[0]
    assert "寿险（营业收入）：91,204.66" in first, first
    assert f"[[cite:{SEGMENTS['id']}]]" in first, first
    # and 财产险分部的净利润同比变动 is 财产险's cell of 净利润同比变动
    first = answer("汀澄保险财产险分部的净利润同比变动多少？", [SEGMENTS])[0]
    assert "财产险（净利润同比变动（%））：5.18" in first, first


# -- each row of a table split over two excerpts, once -----------------------------------------

GRANTS_HEAD = excerpt(
    "沅汀科技股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 三、激励对象的范围及分配\n\n"
    "姓名 | 职务 | 获授的限制性股票数量（万股） | 占授予总数的比例\n\n"
    "韦思远 | 董事、总经理 | 36.00 | 7.20%\n\n"
    "汤以宁 | 副总经理 | 18.00 | 3.60%\n\n",
)
GRANTS_REST = excerpt(
    "沅汀科技股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "柯叶 | 董事会秘书 | 12.00 | 2.40%\n\n"
    "核心骨干（96 人） | — | 364.00 | 72.80%\n\n"
    "预留部分 | — | 70.00 | 14.00%\n\n"
    "合计 | — | 500.00 | 100.00%\n\n"
    "## 四、授予价格\n\n",
)


def test_each_row_of_a_split_table_is_listed_once():
    # 各…分别 over a table split over two excerpts: every row of both, none twice
    first = answer("沅汀科技激励对象分别获授多少万股？", [GRANTS_REST, GRANTS_HEAD])[0]
    head = _head(first)
    for cell in ("36.00", "18.00", "12.00", "364.00"):
        assert head.count(f"：{cell}") == 1, first


def test_each_row_asked_by_its_kind_is_a_row_of_that_kind():
    # 高管分别: the rows whose own cells name an officer (总经理, 副总经理, 董事会秘书), in
    # both parts of the table — not the core staff's or the reserve's
    first = answer("沅汀科技激励计划中高管分别获授多少万股？", [GRANTS_HEAD, GRANTS_REST])[0]
    head = _head(first)
    assert "36.00" in head and "18.00" in head and "12.00" in head, first
    assert "364.00" not in head and "70.00" not in head, first


# -- names asked apart, each stated in one sentence -------------------------------------------

RATINGS = excerpt(
    GROUP,
    "## 三、偿付能力\n\n"
    "本公司及主要保险子公司偿付能力充足率均满足监管要求。在最近一期风险综合评级中，"
    "汀澄人寿为 AA 类，汀澄财险为 BBB 类。",
)


def test_one_sentence_naming_each_name_asked_apart_answers_each():
    first = answer("汀澄人寿和汀澄财险的风险综合评级分别是什么？", [RATINGS])[0]
    assert "未找到" not in first, first
    assert "汀澄人寿为 AA 类" in first and "汀澄财险为 BBB 类" in first, first
    assert f"[[cite:{RATINGS['id']}]]" in first, first
    # a name the sentence does not name is still not found
    blocks = answer("汀澄人寿和汀澄养老的风险综合评级分别是什么？", [RATINGS])
    assert not_found(blocks) or "未找到汀澄养老" in blocks[0], blocks


# -- a figure forecast is what is forecast, not who forecasts ----------------------------------

FORECAST = excerpt(
    "lanxi-forecast-2026",
    "证券代码：301276          证券简称：岚溪电子          公告编号：2027-009\n\n"
    "岚溪电子股份有限公司\n2026 年度业绩预告\n\n"
    "一、本期业绩预计情况\n\n"
    "营业收入：预计 128,000 万元 至 141,000 万元；上年同期为 109,562.30 万元。\n\n"
    "归属于上市公司股东的净利润：预计 15,600 万元 至 17,900 万元。",
)


def test_a_figure_before_a_verb_of_forecasting_is_what_is_forecast():
    # 营收预计: 营收 is the figure forecast (the vocabulary's 营业收入), not a forecaster the
    # document must name; 岚溪电子营收预计… the same with the entity before it
    for question in ("岚溪电子全年营收预计区间是多少？", "岚溪电子营收预计区间是多少？"):
        first = answer(question, [FORECAST])[0]
        assert "128,000" in first and "141,000" in first, first
        assert f"[[cite:{FORECAST['id']}]]" in first, first


# -- a document whose title is a file's key is what its text says it is -------------------------


def test_the_line_after_the_issuers_name_says_what_the_document_is():
    # the title is a file's key; 2026 年度业绩预告 under the issuer's full name names the
    # document, so 业绩预告的公告编号 is this notice's
    first = answer("岚溪电子业绩预告的公告编号是什么？", [FORECAST])[0]
    assert "2027-009" in first, first
    assert f"[[cite:{FORECAST['id']}]]" in first, first


# -- a heading naming two things ------------------------------------------------------------------

PLAN = excerpt(
    "澜禾软件股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 一、股权激励方式及股票来源\n\n"
    "本激励计划采取的激励工具为第二类限制性股票。"
    "股票来源为公司从二级市场回购的本公司人民币 A 股普通股股票。",
)


def test_a_heading_naming_two_things_is_about_each_where_a_sentence_writes_it():
    # 股票来源 is written by the second sentence itself; the first speaks of the 方式
    first = answer("澜禾软件激励计划的股票来源是什么？", [PLAN])[0]
    assert _head(first).startswith("**回答**（澜禾软件）：股票来源为公司从二级市场回购"), first
    assert f"[[cite:{PLAN['id']}]]" in first, first


# -- a qualifier joined across two words --------------------------------------------------------

METRICS = excerpt(
    GROUP,
    "## 二、主要经营指标\n\n"
    "项目 | 本年 | 上年 | 变动（%）\n\n"
    "原保险保费收入 | 120,448.31 | 113,905.72 | 5.74\n\n"
    "## 五、经营情况讨论与分析\n\n"
    "（二）财产险业务\n"
    "汀澄财险实现原保险保费收入 284.15 亿元，同比增长 4.12%，"
    "其中车险保费收入 171.06 亿元，非车险保费收入 113.09 亿元。",
)


def test_a_subsidiarys_part_is_not_the_groups_whole_by_its_scattered_characters():
    # 汀澄财险车险保费收入: 汀澄 the title's, 险保费收入 the group's row — but 汀澄财险 and
    # 车险保费收入 are words the report writes elsewhere: the row's 5.74 is not its growth,
    # and no sentence states it
    assert not_found(answer("汀澄财险车险保费收入同比增长多少？", [METRICS]))
    # the level is stated, by the subsidiary's sentence
    first = answer("汀澄财险车险保费收入是多少？", [METRICS])[0]
    assert "171.06" in first and "5.74" not in first, first


# -- each year asked, a figure asked of each, a list counted -------------------------------------

TARGETS = excerpt(
    "汀屿科技股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 六、公司层面业绩考核要求\n\n"
    "以 2026 年营业收入、净利润为基数，各年度业绩考核目标如下：\n\n"
    "解除限售期 | 考核年度 | 营业收入增长率（A） | 净利润增长率（B）\n\n"
    "第一个解除限售期 | 2027 年 | 不低于 18% | 不低于 12%\n\n"
    "第二个解除限售期 | 2028 年 | 不低于 40% | 不低于 28%\n\n"
    "注：\n"
    "1. 上述“净利润增长率（B）”以扣除非经常性损益后的净利润为计算依据；\n"
    "2. 公司须同时满足营业收入增长率（A）与净利润增长率（B）目标方可解除限售。",
)


def test_each_year_asked_is_every_row_of_years_not_the_column_of_years():
    # 各年度 asks each row (their years are the 考核年度 cells), not the column of years
    first = answer("汀屿科技各年度营业收入增长率考核目标分别是多少？", [TARGETS])[0]
    assert "（营业收入增长率（A））：不低于 18%" in first, first
    assert "（营业收入增长率（A））：不低于 40%" in first, first
    assert "（考核年度）" not in first, first


def test_a_figure_asked_of_each_is_not_answered_by_a_notes_items():
    # 每年的净利润增长率目标分别是多少 asks a figure for each year: the note's items, which
    # write the term but no figure, do not give them; the rows do
    first = answer("汀屿科技每年的净利润增长率目标分别是多少？", [TARGETS])[0]
    assert first.startswith(
        "**回答**（汀屿科技）：第一个解除限售期（净利润增长率（B））：不低于 12%"
    )
    assert "不低于 28%" in first and "注：" not in _head(first), first


REASONS = excerpt(
    "汀州电子股份有限公司 2026 年度业绩预告",
    "## 三、业绩变动原因说明\n\n"
    "1. 报告期内，服务器电源需求快速增长，相关产品出货量同比增长约 62%；\n"
    "2. 公司墨西哥工厂于 2026 年三季度投产，综合毛利率较上年同期提升约 1.8 个百分点；\n"
    "3. 报告期内，公司计入当期损益的政府补助约为 1,900 万元。",
)


def test_a_count_of_a_lists_items_is_answered_by_the_list_whole():
    # 有几条 counts the list's items: the list answers whole, not one item (which states no
    # count of its own)
    first = answer("汀州电子业绩变动原因有几条？", [REASONS])[0]
    assert "1. 报告期内，服务器电源" in first and "3. 报告期内，公司计入" in first, first
    assert f"[[cite:{REASONS['id']}]]" in first, first


# -- an analyst's abbreviation, asked alone --------------------------------------------------


def test_kou_fei_alone_is_the_net_profit_without_non_recurring_items():
    # 扣非 is how an analyst names 扣除非经常性损益后的净利润: 扣非呢？ after the net
    # profit's growth asks the same of it
    notice = excerpt(
        "汀渚电子股份有限公司 2026 年度业绩预告",
        "归属于上市公司股东的净利润：预计 9,600 万元 至 11,200 万元，比上年同期增长 20.15% 至 40.18%。\n\n"
        "扣除非经常性损益后的净利润：预计 8,100 万元 至 9,500 万元，比上年同期增长 24.40% 至 45.90%。",
    )
    history = [{"question": "汀渚电子净利润预计增长多少？"}]
    first = answer("扣非呢？", [notice], history=history)[0]
    assert "8,100 万元" in first and "24.40%" in first, first
    assert "9,600" not in first, first
