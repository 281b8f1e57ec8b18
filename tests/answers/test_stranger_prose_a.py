"""Prose a stranger's questions ask of in their own words: the document states the thing,
the question words it otherwise (这期, 评了几类, 做到, 研报里说, 比去年年底, 新聘, 上限, 占总
股本, 直接持股, 激励计划里…). One test per rule, each on a document of its own (not the
sets' fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

PLAN = excerpt(
    "松岭科技股份有限公司 2027 年股票期权激励计划（草案）摘要",
    "## 二、拟授予的股票期权数量\n\n"
    "本激励计划拟向激励对象授予股票期权 300.00 万份，约占本激励计划草案公告时公司股本总额"
    " 25,000.00 万股的 1.20%。\n\n"
    "## 三、激励对象名单\n\n"
    "姓名 | 职务 | 获授的股票期权数量（万份） | 占本计划公告日股本总额的比例\n\n"
    "闻溪 | 董事、总经理 | 30.00 | 0.12%\n\n"
    "柏舟 | 财务总监 | 18.00 | 0.07%\n\n"
    "## 四、行权价格\n\n"
    "股票期权的行权价格为每股 25.30 元。",
)


# -- the question's grammar ----------------------------------------------------------------


def test_this_round_of_a_plan_points_back_like_this_time():
    # 这期 is the round asked of, not 期限 (a term the text writes) glued to 这
    first = answer("松岭科技这期股票期权的行权价格是多少？", [PLAN])[0]
    assert "25.30" in first, first


def test_a_verb_of_a_rating_given_links_the_rated_to_its_grade():
    rating = excerpt(
        "临川保险集团股份有限公司 2026 年年度报告摘要",
        "三、偿付能力\n在最近一期风险综合评级中，临川人寿为 A 类，临川财险为 B 类。",
    )
    first = answer("在最近一期的风险综合评级里，临川人寿评了几类？", [rating])[0]
    assert "A 类" in first, first
    assert not_found(answer("临川人寿偿付能力充足率评了多少？", [rating]))


def test_a_verb_of_reaching_links_the_thing_to_its_forecast():
    forecast = excerpt(
        "青岑电子股份有限公司 2026 年度业绩预告",
        "一、本期业绩预计情况\n\n"
        "营业收入：预计 85,000 万元 至 92,000 万元；上年同期为 71,204.10 万元。",
    )
    first = answer("青岑电子2026年营收预计做到多少，上年同期又是多少？", [forecast])[0]
    for figure in ("85,000", "92,000", "71,204.10"):
        assert figure in first, first


def test_a_document_quoted_as_saying_is_where_to_look():
    note = excerpt(
        "澜石机电（603912）2026 年三季报点评：盈利修复",
        "**盈利能力改善。** 前三季度公司综合毛利率为 28.40%，同比提升 0.95 个百分点。",
    )
    first = answer("研报里说澜石前三季度综合毛利率多少，同比提升了几个百分点？", [note])[0]
    assert "28.40" in first and "0.95" in first, first


def test_the_year_end_before_is_a_balance_date_not_the_year_on_year_period():
    report = excerpt(
        "南溪食品股份有限公司 2026 年半年度报告",
        "二、经营情况\n报告期末，公司经销商数量 1,512 家，较上年末净增加 84 家。",
    )
    first = answer("南溪食品现在有多少家经销商？比去年年底净增了几家？", [report])[0]
    assert "1,512" in first and "84" in first, first


def test_a_postposition_of_place_parts_where_from_what_is_asked_there():
    # 激励计划里闻溪获授: the plan (the title's) and 闻溪's row, not one phrase
    first = answer("松岭科技激励计划里闻溪获授多少万份？", [PLAN])[0]
    assert "30.00" in first, first
    assert not_found(answer("松岭科技激励计划里贝川获授多少万份？", [PLAN]))


NOTE_TITLE = "澜石机电（603912）2026 年三季报点评：盈利修复"
BYLINE = excerpt(
    NOTE_TITLE,
    "# 澜石机电（603912）2026 年三季报点评\n\n云舟证券研究所 | 公司研究 | 2026 年 10 月 30 日",
)
ADVICE = excerpt(
    NOTE_TITLE,
    "**投资建议：** 我们维持公司 2026—2028 年归母净利润预测为 2.10/2.64/3.15 亿元，维持“买入”评级。",
)


def test_who_forecasts_is_named_by_the_document_not_the_forecast():
    # the note names its broker in its byline; the forecast is written 我们…预测
    first = answer("云舟证券预测澜石2026年归母净利润多少亿元？", [BYLINE, ADVICE])[0]
    assert "2.10" in first, first
    assert not_found(answer("海川证券预测澜石2026年归母净利润多少亿元？", [BYLINE, ADVICE]))


GRANTS = excerpt(
    "青溪软件股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 三、激励对象的范围及分配\n\n"
    "本激励计划首次授予的激励对象共计 96 人，包括公司董事、高级管理人员及核心技术骨干。\n\n"
    "姓名 | 职务 | 获授的限制性股票数量（万股） | 占授予限制性股票总数的比例\n\n"
    "严朔 | 董事长 | 30.00 | 10.00%\n\n"
    "陆棠 | 副总经理 | 12.00 | 4.00%\n\n"
    "钟逸 | 董事会秘书 | 8.00 | 2.67%\n\n"
    "核心技术骨干（93 人） | — | 250.00 | 83.33%",
)


def test_who_all_asks_the_people_not_the_sentence_naming_their_kinds():
    first = answer("青溪软件这次激励对象里的董事都有谁？", [GRANTS])[0]
    assert "严朔" in first, first


# -- a domain's words (knowledge/vocabulary.py) -------------------------------------------


def test_a_new_appointment_is_stated_by_the_board_appointing():
    board = excerpt(
        "溪山保险集团股份有限公司 2026 年年度报告摘要",
        "六、其他重要事项\n经第五届董事会第三次会议审议通过，聘任温砚先生为本公司首席风险官。",
    )
    assert "温砚" in answer("溪山保险新聘的首席风险官是谁？", [board])[0]
    assert not_found(answer("溪山保险新聘的首席精算师是谁？", [board]))


def test_the_share_capital_is_the_total_share_capital():
    first = answer("松岭科技这次激励计划总共拟授予多少万份，占总股本多少？", [PLAN])[0]
    assert "300.00" in first and "1.20" in first, first


def test_a_direct_holding_is_stated_by_what_the_holder_directly_holds():
    holders = excerpt(
        "南溪食品股份有限公司 2026 年半年度报告摘要",
        "三、控股股东及实际控制人\n"
        "控股股东南溪实业持有公司 90,000,000 股；实际控制人沈临先生直接持有公司 3.60% 的股份。",
    )
    first = answer("南溪食品的实际控制人是谁？他直接持股多少？", [holders])[0]
    assert "沈临" in first and "3.60" in first, first
    assert not_found(answer("南溪食品的实际控制人间接持股多少？", [holders]))


def test_senior_management_is_named_by_its_posts():
    # 高管 (高级管理人员) are the 经理, 副经理, 财务负责人 and 董事会秘书 a table lists by post
    first = answer("青溪软件激励对象里的高管有哪些？", [GRANTS])[0]
    assert "陆棠" in first and "钟逸" in first, first


PLACEMENT = excerpt(
    "南溪食品股份有限公司 2026 年度向特定对象发行 A 股股票预案",
    "四、发行数量\n"
    "本次发行的股票数量不超过 45,000,000 股（含本数），即不超过本次发行前公司总股本的 30%。\n"
    "六、募集资金金额及用途\n"
    "本次向特定对象发行股票募集资金总额不超过 80,000.00 万元（含本数），扣除发行费用后的"
    "募集资金净额拟投资于以下项目：\n"
    "1、华南生产基地建设项目，项目投资总额 52,000.00 万元，拟使用募集资金 50,000.00 万元；\n"
    "2、补充流动资金，项目投资总额 30,000.00 万元，拟使用募集资金 30,000.00 万元。",
)


# -- structures -----------------------------------------------------------------------------


def test_a_bound_asks_the_thing_in_the_form_of_its_cap():
    first = answer("南溪食品定增预案里，募集资金总额上限是多少万元？", [PLACEMENT])[0]
    assert "80,000.00" in first, first
    assert not_found(answer("南溪食品定增的发行价格上限是多少？", [PLACEMENT]))


def test_a_lead_in_writing_a_figure_of_its_own_answers_by_itself():
    # not an item's 拟使用募集资金 read under it
    first = answer("南溪食品定增募集资金总额不超过多少万元？", [PLACEMENT])[0]
    assert "80,000.00" in first and "50,000.00" not in first, first


def test_a_share_is_written_as_the_whole_s_percent():
    first = answer("南溪这次定增最多发多少股？占发行前总股本的比例上限是多少？", [PLACEMENT])[0]
    assert "45,000,000" in first and "30%" in first, first


def test_a_phrase_the_title_writes_names_the_document_not_a_column():
    # 激励计划 is the plan the table is in; a header cell's 本计划 does not ask it a column
    first = answer("松岭科技激励计划中，柏舟获授的股票期权数量是多少？", [PLAN])[0]
    assert "18.00" in first, first


# -- a follow-up --------------------------------------------------------------------------


def test_the_unit_an_earlier_question_asked_in_is_not_asked_of_by_its_follow_up():
    report = excerpt(
        "南溪食品股份有限公司 2026 年半年度报告摘要",
        "二、主要会计数据\n\n"
        "项目 | 本报告期 | 上年同期 | 本报告期比上年同期增减\n\n"
        "营业收入（元） | 1,204,562,118.20 | 1,120,334,071.55 | 7.52%\n\n"
        "归属于上市公司股东的净利润（元） | 245,118,306.74 | 226,042,919.31 | 8.44%\n\n"
        "三、经营情况\n\n报告期内，公司实现归属于上市公司股东的净利润 2.45 亿元，同比增长 8.44%。",
    )
    history = [{"question": "南溪食品中报归母净利润多少亿元？", "answer": "", "runId": "run_1"}]
    first = answer("去年同期是多少？", [report], history)[0]
    assert "226,042,919.31" in first, first
