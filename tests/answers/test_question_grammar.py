"""How a question's grammar decides what is asked — the act an amount is asked of, the
qualifier a count names, the thing a count counts — each rule on a document of its own
(not the evaluation sets' fixtures). Driven without a database (tests/answers/reader.py)."""

import pytest

from agents.providers.grammar import (
    FALL,
    FALL_COLLOQUIAL,
    RISE,
    RISE_COLLOQUIAL,
    UNSIGNED_CHANGE,
)
from tests.answers.reader import answer, excerpt, not_found

RESOLUTION = excerpt(
    "qinghe-board-2026-10",
    "青禾电气股份有限公司\n第三届董事会第五次会议决议公告\n\n"
    "二、董事会会议审议情况\n\n"
    "（一）审议通过《关于使用闲置自有资金进行委托理财的议案》\n\n"
    "同意公司使用额度不超过人民币 2 亿元的闲置自有资金购买低风险理财产品，期限 12 个月。\n\n"
    "表决结果：同意 7 票，反对 0 票，弃权 0 票。\n\n"
    "（二）审议通过《关于向银行申请综合授信的议案》\n\n"
    "同意公司向银行申请总额不超过人民币 10 亿元的综合授信额度。\n\n"
    "表决结果：同意 7 票，反对 0 票，弃权 0 票。",
)


def test_an_amount_asked_of_an_act_is_answered_by_the_clause_of_the_thing_measured():
    """批 is the asker's word for the act (the resolution writes 同意): what is measured is
    the money named after 多少, and what it is used for."""
    blocks = answer("青禾电气董事会批了多少闲置自有资金做委托理财？", [RESOLUTION])
    assert "2 亿元的闲置自有资金" in blocks[0]


def test_the_doer_of_an_act_asked_of_must_be_named_by_the_document():
    """The clause leaves its doer out; the document must still name it (no 监事会 here)."""
    assert not_found(answer("青禾电气监事会批了多少闲置自有资金做委托理财？", [RESOLUTION]))


def test_what_a_thing_is_used_for_is_asked_too():
    """闲置自有资金 is used for 委托理财 here, not for 综合授信: the use is stated or the
    amount does not answer."""
    blocks = answer("青禾电气批了多少钱做委托理财？", [RESOLUTION])
    assert "2 亿元" in blocks[0] and "10 亿元" not in blocks[0]


NETWORK = excerpt(
    "岚川物流股份有限公司 2026 年半年度报告",
    "三、运输网络\n截至报告期末，公司开通干线线路 120 条，自有及合作冷藏车辆 1,480 台。\n"
    "报告期内，公司新增仓库 6 座，其中自有仓库 2 座。",
)


def test_a_qualifier_written_only_in_a_union_is_not_stated():
    """自有及合作冷藏车辆 1,480 台 counts both kinds: it does not say how many are 自有."""
    assert not_found(answer("岚川物流自有冷藏车辆有多少台？", [NETWORK]))
    assert "1,480" in answer("岚川物流自有及合作冷藏车辆有多少台？", [NETWORK])[0]
    assert "1,480" in answer("岚川物流冷藏车辆有多少台？", [NETWORK])[0]


FLEET = excerpt(
    "岚川物流股份有限公司 2026 年半年度报告",
    "三、运输网络\n截至报告期末，公司冷藏车辆 1,480 台。\n"
    "报告期内，公司新增仓库 6 座，其中自有仓库 2 座。",
)


def test_a_part_of_a_thing_asked_is_one_thing_not_two_asked_apart():
    """冷藏车辆有多少是自有的 asks the 自有 part of the vehicles — not the vehicles and, apart,
    whatever else is 自有 (自有仓库)."""
    assert not_found(answer("岚川物流冷藏车辆有多少是自有的？", [FLEET]))
    assert not_found(answer("岚川物流冷藏车辆有多少是自有的？", [NETWORK]))
    assert "自有仓库 2 座" in answer("岚川物流新增仓库中自有的有几座？", [FLEET])[0]


MEETING = excerpt(
    "qingshan-board-2026-08",
    "青山环境股份有限公司\n第二届董事会第九次会议决议公告\n\n一、董事会会议召开情况\n\n"
    "本次会议应出席董事 7 人，实际出席董事 7 人，其中独立董事周航先生以通讯表决方式出席。\n\n"
    "二、其他说明\n\n公司现有员工 1,050 人，其中研发人员 312 人。",
)


def test_a_count_asked_of_a_thing_is_answered_by_the_clause_counting_it():
    """应出席董事 7 人 counts the directors: the independent ones are named in a later clause
    that counts nothing."""
    assert not_found(answer("青山环境独立董事有几位？", [MEETING]))
    assert "7 人" in answer("青山环境应出席董事有几位？", [MEETING])[0]
    assert "研发人员 312 人" in answer("青山环境研发人员有多少名？", [MEETING])[0]


ROUTES = excerpt(
    "岚川物流股份有限公司 2026 年半年度报告",
    "三、运输网络\n截至报告期末，公司开通干线线路 120 条，冷藏车辆 1,480 台。\n"
    "四、其他事项\n2026 年 8 月，公司就冷链数据平台签署授权协议，获得首付款 0.6 亿元。\n"
    "报告期内，公司环氧涂料销量 2.3 万吨。",
)


def test_a_thing_measured_before_its_act_is_asked_without_the_verb():
    """干线线路开了多少条: the report writes the act on the thing (开通干线线路 120 条)."""
    assert "120 条" in answer("岚川物流干线线路开了多少条？", [ROUTES])[0]


def test_a_verb_the_excerpts_never_write_on_the_thing_stays_asked():
    """产了多少 asks the output, which the sales volume (销量) does not state."""
    assert not_found(answer("岚川物流环氧涂料产了多少？", [ROUTES]))


def test_a_verb_of_obtaining_before_le_is_grammar():
    """首付款拿了多少: 拿 (the 了 after it is a particle) links the thing to its value."""
    assert "0.6 亿元" in answer("冷链数据平台的授权首付款拿了多少？", [ROUTES])[0]


PLAN = excerpt(
    "青川食品股份有限公司 2026 年度向特定对象发行 A 股股票预案",
    "一、本次发行方案概要\n本次向特定对象发行股票拟募集资金总额不超过 8.00 亿元，"
    "扣除发行费用后全部用于智能工厂建设项目。",
)


def test_an_intention_asked_is_the_plan_the_report_writes():
    """打算 asks what the plan is (拟募集资金…): it names nothing the answer must state."""
    assert "8.00 亿元" in answer("青川食品这次定增打算募多少钱？", [PLAN])[0]


ACCOUNTS = excerpt(
    "松涛化工股份有限公司 2026 年半年度报告",
    "第二节 主要会计数据\n报告期内，公司实现营业收入 75.2 亿元，同比增长 6.1%；"
    "归属于上市公司股东的净利润 5.4 亿元，同比下降 3.2%。\n报告期末，公司资产负债率为 41.3%。",
)


def test_a_fall_asked_in_one_word_is_stated_by_the_fall_written():
    """降了多少 asks the fall 下降 3.2% states; a ratio with no change written does not."""
    assert "下降 3.2%" in answer("松涛化工净利润降了多少？", [ACCOUNTS])[0]
    assert not_found(answer("松涛化工资产负债率降了多少？", [ACCOUNTS]))


APPOINTMENTS = excerpt(
    "qinghe-board-2026-11",
    "青禾电气股份有限公司\n第三届董事会第六次会议决议公告\n\n"
    "（一）审议通过《关于聘任公司副总经理的议案》\n\n"
    "同意聘任林舟先生、何雨女士为公司副总经理。\n\n"
    "表决结果：同意 7 票，反对 0 票，弃权 0 票。",
)


def test_a_count_under_a_heading_that_names_the_thing_does_not_count_it():
    """同意 7 票 counts votes on the motion whose title names 副总经理, not the managers."""
    assert not_found(answer("青禾电气董事会聘了几位副总经理？", [APPOINTMENTS]))


QUARTER = excerpt(
    "松岭成长混合型证券投资基金 2026 年第 3 季度报告",
    "§1 主要财务指标\n本报告期基金份额净值增长率为 2.15%，同期业绩比较基准收益率为 1.40%。\n"
    "本报告期基金实现利润 0.86 亿元，同比增长 12.0%。",
)
QUARTER_WITH_PRIOR = excerpt(
    "松岭成长混合型证券投资基金 2026 年第 3 季度报告",
    "§1 主要财务指标\n本报告期基金份额净值增长率为 2.15%。\n上年同期基金份额净值增长率为 -0.85%。",
)


def test_last_year_s_part_of_the_year_is_not_the_report_s_own():
    """去年三季度 over a third-quarter report of this year asks the year-ago quarter: the
    report's own figure (2.15%) does not answer it, nor a change on that quarter (同比增长);
    the year-ago figure the report writes does."""
    assert not_found(answer("松岭成长混合基金去年三季度净值增长率是多少？", [QUARTER]))
    assert not_found(answer("松岭成长混合基金去年三季度实现利润多少？", [QUARTER]))
    blocks = answer("松岭成长混合基金去年三季度净值增长率是多少？", [QUARTER_WITH_PRIOR])
    assert "-0.85%" in blocks[0]


def test_a_count_goes_on_from_the_thing_named_before_it():
    """The thing named in the clause before its count (发行对象…，不超过 35 名) is counted."""
    plan = excerpt(
        "青川食品股份有限公司 2026 年度向特定对象发行 A 股股票预案",
        "二、发行对象\n本次发行的发行对象为符合中国证监会规定条件的特定投资者，不超过 35 名。",
    )
    assert "35 名" in answer("青川食品定增的发行对象有几名？", [plan])[0]


# -- the words of a change have one home (grammar.py) -----------------------------------

SUMMARY = excerpt(
    "临川精工股份有限公司 2026 年半年度报告摘要",
    "二、公司基本情况\n（一）主要会计数据和财务指标\n单位：人民币万元\n\n"
    "项目 | 2026 年 1—6 月 | 2025 年 1—6 月 | 本期比上年同期增减(%)\n\n"
    "营业收入 | 86,420.10 | 80,115.60 | 7.87\n\n"
    "现金及现金等价物净增加额 | 3,125.40 | 2,800.00 | 11.62",
)


@pytest.mark.parametrize(
    "word", [*RISE, *FALL, *RISE_COLLOQUIAL, *FALL_COLLOQUIAL, *UNSIGNED_CHANGE]
)
def test_every_word_of_a_change_asks_the_change_column(word):
    """Each word grammar.py lists for a change (回落 too, which one list had forgotten) asks
    the row's signed change, not its level."""
    first = answer(f"临川精工上半年营业收入{word}了多少？", [SUMMARY])[0]
    assert "营业收入（本期比上年同期增减(%)）：7.87" in first, first
    assert "[[cite:" in first, first


def test_a_label_that_names_a_change_is_a_level():
    """现金及现金等价物净增加额 writes 增加 as part of its own name: asked what it is, the
    level answers, not the change column."""
    first = answer("临川精工上半年现金及现金等价物净增加额是多少？", [SUMMARY])[0]
    assert "现金及现金等价物净增加额（2026 年 1—6 月）：3,125.40" in first, first
    assert first.splitlines()[0].endswith("：3,125.40"), first
    assert "[[cite:" in first, first


def test_a_colloquial_move_is_stated_by_a_move_of_its_own_sense():
    """涨了多少 is answered by the rise a report writes, never by a fall (下降 4.1%): 涨 / 跌
    read like 升 / 降."""
    rise = excerpt(
        "临川精工股份有限公司 2026 年半年度报告摘要",
        "三、经营情况讨论与分析\n报告期内，公司实现营业收入 8.64 亿元，同比增长 7.9%。",
    )
    fall = excerpt(
        "临川精工股份有限公司 2026 年半年度报告摘要",
        "三、经营情况讨论与分析\n报告期内，公司实现营业收入 8.64 亿元，同比下降 4.1%。",
    )
    assert "同比增长 7.9%" in answer("临川精工上半年营业收入涨了多少？", [rise])[0]
    assert "同比下降 4.1%" in answer("临川精工上半年营业收入跌了多少？", [fall])[0]
    assert not_found(answer("临川精工上半年营业收入涨了多少？", [fall]))
    assert not_found(answer("临川精工上半年营业收入跌了多少？", [rise]))
