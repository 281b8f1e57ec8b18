"""Cited non-answers and the figures of tables and forecasts (docs/extractive-provider.md,
"Rules read from the evaluation rounds"): a forecast's range asked as 预告区间, the year
before's figure given for the period asked, … — each rule on a small document of its own,
driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

# (a text file's title is its name; the notice's own title is its first lines)
PREVIEW = excerpt(
    "tingan-preview-2026",
    "证券代码：301562          证券简称：汀岸材料          公告编号：2027-006\n\n"
    "汀岸材料股份有限公司\n2026 年度业绩预告\n\n"
    "一、本期业绩预计情况\n\n"
    "扣除非经常性损益后的净利润：预计 12,600 万元 至 14,100 万元，比上年同期增长 20.45% 至 "
    "34.79%；上年同期为盈利 10,460.18 万元。\n\n"
    "营业收入：预计 88,000 万元 至 95,000 万元；上年同期为 79,316.52 万元。",
)


# -- a forecast's range ------------------------------------------------------------------


def test_a_forecasts_range_asked_as_its_preview_range_is_the_expected_figures():
    first = answer("汀岸材料 2026 年扣非净利润预告区间是多少？", [PREVIEW])[0]
    assert "12,600" in first and "14,100" in first
    assert "[[cite:" in first


def test_a_range_asked_of_a_figure_the_preview_does_not_forecast_is_not_found():
    assert not_found(answer("汀岸材料 2026 年经营现金流预告区间是多少？", [PREVIEW]))


def test_the_year_befores_figure_does_not_answer_the_period_asked():
    earlier = "汀岸材料 2026 年扣非净利润预告区间是多少？"
    first = answer("营收呢？", [PREVIEW], [{"question": earlier}])[0]
    assert "88,000" in first and "95,000" in first
    assert "79,316.52" not in first


def test_the_year_befores_figure_answers_when_the_year_before_is_asked():
    first = answer("汀岸材料营业收入上年同期是多少？", [PREVIEW])[0]
    assert "79,316.52" in first


# -- a table's rows ----------------------------------------------------------------------

GRANTS = excerpt(
    "澍桥科技股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 三、激励对象的范围及分配\n\n"
    "姓名 | 职务 | 获授的限制性股票数量（万股） | 占授予限制性股票总数的比例\n\n"
    "韦知澜 | 董事长 | 30.00 | 7.50%\n\n"
    "中层管理人员及核心骨干（96 人） | — | 310.00 | 77.50%\n\n"
    "预留部分 | — | 60.00 | 15.00%\n\n"
    "合计 | — | 400.00 | 100.00%",
)


def test_a_count_asked_of_a_row_that_states_none_is_not_another_rows_count():
    # (the table writes 人 only inside another row's label, as that row's own figure; the
    # row asked names no people at all)
    assert not_found(answer("澍桥科技预留部分的激励对象有多少人？", [GRANTS]))


def test_a_count_a_rows_label_states_answers_for_that_row():
    first = answer("澍桥科技中层管理人员及核心骨干有多少人？", [GRANTS])[0]
    assert "96 人" in first and "[[cite:" in first


# -- a table of targets per tranche ----------------------------------------------------

TARGETS = excerpt(
    "澜汐医疗股份有限公司 2027 年股票期权激励计划（草案）摘要",
    "## 五、公司层面业绩考核要求\n\n"
    "以 2026 年营业收入、净利润为基数，各年度业绩考核目标如下：\n\n"
    "行权期 | 考核年度 | 营业收入增长率 | 净利润增长率\n\n"
    "第一个行权期 | 2027 年 | 不低于 18% | 不低于 12%\n\n"
    "第二个行权期 | 2028 年 | 不低于 39% | 不低于 27%\n\n"
    "第三个行权期 | 2029 年 | 不低于 62% | 不低于 45%",
)


def test_a_modal_before_the_verb_linking_the_thing_to_its_value_asks_nothing():
    first = answer("澜汐医疗第三个行权期净利润增速要达到多少？", [TARGETS])[0]
    assert "45%" in first and "[[cite:" in first


def test_things_coordinated_and_asked_each_are_a_cell_each_of_the_row():
    blocks = answer("澜汐医疗第二个行权期的业绩考核，营收和净利润增速各需达到多少？", [TARGETS])
    assert "39%" in blocks[0] and "27%" in blocks[0]
    assert "62%" not in blocks[0] and "[[cite:" in blocks[0]


# -- the unit an answer is asked in ------------------------------------------------------

BALANCES = excerpt(
    "澧川银行股份有限公司 2026 年半年度报告摘要",
    "二、主要会计数据和财务指标\n\n单位：人民币百万元\n\n"
    "项目 | 本期末 | 上年末 | 本期末比上年末增减(%)\n\n"
    "资产总额 | 402,118.35 | 381,902.64 | 5.29\n\n"
    "吸收存款总额 | 288,460.17 | 270,013.58 | 6.83",
)


def test_a_unit_in_brackets_after_the_question_word_is_the_answers_form_not_a_gloss():
    first = answer("澧川银行吸收存款总额本期末和上年末各多少（百万元）？", [BALANCES])[0]
    assert "288,460.17" in first and "270,013.58" in first
    assert "402,118.35" not in first


def test_a_scale_of_a_scale_is_a_unit_asked_not_a_thing_asked():
    # (a table in 万元 states the figure asked in 百万元, in another scale)
    costs = excerpt(
        "沅舟物流股份有限公司 2026 年年度报告摘要",
        "单位：万元\n\n项目 | 本年 | 上年\n\n管理费用 | 18,204.66 | 16,930.12",
    )
    first = answer("沅舟物流本年管理费用是多少百万元？", [costs])[0]
    assert "18,204.66" in first and "[[cite:" in first


# -- a section's number ------------------------------------------------------------------

FUND = excerpt(
    "汐川稳进增利混合型证券投资基金 2026 年第三季度报告",
    "## §4 管理人报告\n\n"
    "4.3 报告期内基金持有人数或基金资产净值预警说明\n\n"
    "本报告期内，本基金未出现连续二十个工作日基金份额持有人数量不满二百人或者基金资产净值低于"
    "五千万元的情形。",
)


def test_a_sections_number_is_no_figure_of_what_its_title_names():
    assert not_found(answer("汐川稳进增利报告期末有多少持有人？", [FUND]))


def test_the_sentence_under_a_numbered_section_answers_its_figure():
    performance = excerpt(
        "汐川稳进增利混合型证券投资基金 2026 年第三季度报告",
        "4.2 报告期内基金的业绩表现\n\n"
        "截至本报告期末，本基金份额净值为 1.1275 元，本报告期基金份额净值增长率为 3.41%。",
    )
    first = answer("汐川稳进增利本报告期基金份额净值增长率是多少？", [performance])[0]
    assert "3.41%" in first and "[[cite:" in first


# -- a relative clause's head ------------------------------------------------------------

NON_RECURRING = excerpt(
    "汶港重工股份有限公司 2026 年第三季度报告",
    "（二）非经常性损益项目和金额\n单位：万元  币种：人民币\n\n"
    "非经常性损益项目 | 本期金额 | 年初至报告期末金额\n\n"
    "非流动性资产处置损益 | 8.31 | 22.70\n\n"
    "计入当期损益的政府补助 | 416.52 | 1,207.94\n\n"
    "合计 | 380.17 | 1,096.55",
)


def test_the_head_of_a_relative_clause_alone_names_nothing_of_its_own():
    first = answer("汶港重工前三季度拿到的政府补助（计入损益的部分）有多少？", [NON_RECURRING])[0]
    assert "1,207.94" in first and "[[cite:" in first


# -- a broker's forecast column ----------------------------------------------------------

NOTE_TITLE = "溯澜科技（300981）2026 年中报点评：出货提速，盈利改善"


def _forecasts(revenue_2028: str = "3,702") -> list[dict]:
    return [
        excerpt(
            NOTE_TITLE,
            f"# {NOTE_TITLE}\n\n岱川证券研究所 | 公司研究 | 电子 | 2026 年 8 月 28 日\n\n"
            "**投资评级：增持（维持）**",
        ),
        excerpt(
            NOTE_TITLE,
            "## 盈利预测与估值\n\n"
            "指标 | 2025A | 2026E | 2027E | 2028E\n\n"
            f"营业收入（百万元） | 2,118 | 2,604 | 3,175 | {revenue_2028}\n\n"
            "归母净利润（百万元） | 236 | 291 | 358 | 430\n\n"
            "EPS（元/股） | 0.59 | 0.73 | 0.90 | 1.08",
        ),
    ]


def test_a_brokers_forecast_asked_of_a_company_by_its_year_marked_e_is_that_column():
    first = answer("岱川对溯澜科技 2027E 营业收入的预测是多少？", _forecasts())[0]
    assert "3,175" in first and "[[cite:" in first
    assert "2,604" not in first.split("\n")[0]


def test_a_year_marked_e_is_a_time_however_it_is_glued_to_what_follows():
    first = answer("岱川对溯澜科技2026E归母净利润的预测是多少？", _forecasts())[0]
    assert "291" in first and "[[cite:" in first


def test_a_row_named_by_its_label_and_unit_is_not_answered_by_another_row():
    # (the note gives no revenue for 2028: the net profit's row is not the one asked)
    assert not_found(answer("岱川对溯澜科技 2028E 营业收入的预测是多少？", _forecasts("—")))


def test_a_holder_before_对_is_no_author_when_no_judgement_is_asked():
    holders = excerpt(
        "澍桥科技股份有限公司 2026 年半年度报告摘要",
        "（二）前十名股东持股情况\n\n"
        "股东名称 | 持股比例(%)\n\n"
        "澍桥控股集团有限公司 | 32.15\n\n"
        "全国社保基金一一三组合 | 2.04\n\n"
        "注：香港中央结算有限公司为沪股通股票的名义持有人，报告期末未进入前十名股东。",
    )
    assert not_found(answer("香港中央结算对澍桥科技的持股比例是多少？", [holders]))
