"""Question words and paraphrases over prose, as a fifth hand asked them: a segment asked by
the accounting standard's word. One test per rule, each on a document of its own (not the
sets' fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

INSURER = excerpt(
    "汀澜保险集团股份有限公司 2027 年年度报告摘要",
    "三、分部经营情况\n单位：人民币百万元\n"
    "分部 | 营业收入 | 分部净利润\n"
    "人寿保险 | 96,310.52 | 6,204.17\n"
    "健康保险 | 21,845.06 | 1,388.40\n"
    "资产管理 | 2,917.33 | 704.81\n"
    "合计 | 121,072.91 | 8,297.38",
)


def test_a_vocabulary_word_is_stated_by_its_expansion_whatever_order_the_report_writes():
    # 经营分部 → 分部 (knowledge/vocabulary.py): the heading's 分部经营情况 writes 经营 and 分部
    # the other way round, which does not make the table's 分部 another thing
    # (reading.states)
    first = answer("汀澜保险分哪几个经营分部披露？", [INSURER])[0]
    for segment in ("人寿保险", "健康保险", "资产管理"):
        assert segment in first, first
    assert f"[[cite:{INSURER['id']}]]" in first, first
    assert not_found(answer("汀澜保险分哪几个经营区域披露？", [INSURER]))


HALF_YEAR = excerpt(
    "松岩电气股份有限公司 2027 年半年度报告",
    "第二节 主要会计数据\n报告期内，公司实现营业收入 312.50 亿元，同比增长 6.80%；归属于上市公司"
    "股东的净利润 21.4 亿元，同比下降 2.6%。",
)


def test_a_verb_and_its_negation_asks_yes_or_no_of_the_figures_asked_beside_it():
    # 利润是不是下滑了 (like 下滑了吗): the figures are quoted, the judgement is the reader's
    # (reading._judged_runs)
    first = answer("松岩电气上半年营收、归母净利润同比各变动多少？利润是不是下滑了？", [HALF_YEAR])[
        0
    ]
    assert "6.80" in first and "2.6%" in first, first
    assert f"[[cite:{HALF_YEAR['id']}]]" in first, first
    first = answer("松岩电气上半年归母净利润同比变动多少？有没有下滑？", [HALF_YEAR])[0]
    assert "2.6%" in first and f"[[cite:{HALF_YEAR['id']}]]" in first, first
    assert not_found(answer("松岩电气上半年海外收入同比变动多少？利润是不是下滑了？", [HALF_YEAR]))


PROFILE = excerpt(
    "澜石化工股份有限公司 2027 年年度报告",
    "第一节 公司简介\n公司主营环氧树脂与特种涂料，总部位于宁波。\n\n"
    "第二节 主要会计数据\n报告期内，公司实现营业收入 88.60 亿元，同比增长 4.10%。",
)


def test_a_place_asked_by_its_kind_asks_where():
    # 在哪个城市 (位于哪个省份): the kind names the answer's form, like 在哪里
    # (grammar.MEASURE)
    first = answer("澜石化工总部在哪个城市？", [PROFILE])[0]
    assert "宁波" in first and f"[[cite:{PROFILE['id']}]]" in first, first
    assert not_found(answer("澜石化工的研发中心在哪个城市？", [PROFILE]))


def test_yoy_is_the_year_on_year_period():
    # YoY is an analyst's 同比 (knowledge/periods.py: YOY), not a word the report must write
    first = answer("松岩电气上半年营收多少？YoY 增长多少？", [HALF_YEAR])[0]
    assert "312.50" in first and "6.80" in first, first
    assert f"[[cite:{HALF_YEAR['id']}]]" in first, first
    level = excerpt(
        "松岩电气股份有限公司 2027 年半年度报告",
        "第二节 主要会计数据\n报告期内，公司实现营业收入 312.50 亿元，较上年末增长 6.80%。",
    )
    assert not_found(answer("松岩电气上半年营收yoy增长多少？", [level]))


BOARD = excerpt(
    "qingshan-board-2027-04",
    "证券代码：301466          证券简称：青杉科技          公告编号：2027-021\n\n"
    "青杉科技股份有限公司\n第二届董事会第一次会议决议公告\n\n"
    "（一）审议通过《关于聘任公司总经理的议案》\n\n"
    "经董事长提名，同意聘任程远帆先生为公司总经理，任期与第二届董事会任期一致。\n\n"
    "表决结果：同意 7 票，反对 0 票，弃权 0 票。",
)


def test_a_post_held_after_who_is_asked_like_its_verb():
    # 聘了谁做总经理: 做 before the post is 当 / 担任 (grammar.PREDICATE_BEFORE)
    first = answer("青杉科技董事会聘了谁做总经理？", [BOARD])[0]
    assert "程远帆" in first and f"[[cite:{BOARD['id']}]]" in first, first
    assert not_found(answer("青杉科技董事会聘了谁做财务总监？", [BOARD]))


QUARTER = excerpt(
    "澄波电子股份有限公司 2027 年第一季度报告",
    "三、其他提醒事项\n"
    "公司提请投资者关注以下风险：（1）消费电子需求复苏不及预期；（2）晶圆采购价格波动；"
    "（3）海外客户集中度较高。",
)


def test_a_report_warning_investors_is_a_verb_of_mentioning():
    # 公司提醒投资者注意 (提请投资者关注): the company warns, what is asked is what it names
    # (grammar.WARNING)
    first = answer("澄波电子一季报里公司提醒投资者注意哪几项风险？", [QUARTER])[0]
    for risk in ("消费电子需求复苏不及预期", "晶圆采购价格波动", "海外客户集中度较高"):
        assert risk in first, first
    assert f"[[cite:{QUARTER['id']}]]" in first, first
    assert not_found(answer("澄波电子一季报里公司提醒投资者注意哪几项机遇？", [QUARTER]))


BOND_FUND = excerpt(
    "松涛纯债债券型证券投资基金 2027 年第 1 季度报告",
    "§4 管理人报告\n一季度债券市场先抑后扬，十年期国债收益率自 1.92% 下行至 1.85%。本基金维持中性久期。",
)


def test_from_how_much_is_a_coverb_not_the_act_asked_of():
    # 收益率从多少降到了多少: 从 is the coverb of a range, not a verb whose doer is 收益率
    # (reading._without_act_verb); the fund's 季报 names where to look
    first = answer("松涛纯债的季报里，一季度十年期国债收益率从多少降到了多少？", [BOND_FUND])[0]
    assert "1.92" in first and "1.85" in first, first
    assert f"[[cite:{BOND_FUND['id']}]]" in first, first
    assert not_found(
        answer("松涛纯债的季报里，一季度五年期国债收益率从多少降到了多少？", [BOND_FUND])
    )


def test_a_direction_to_the_level_reached_links_the_thing_to_its_figure():
    # 降到 (回落至, 涨到) like 下行到: no word the excerpts must write (grammar.PREDICATE_AFTER)
    first = answer("一季度十年期国债收益率降到了多少？", [BOND_FUND])[0]
    assert "1.85" in first and f"[[cite:{BOND_FUND['id']}]]" in first, first
    assert not_found(answer("一季度五年期国债收益率降到了多少？", [BOND_FUND]))


def _cash_management(motion: str) -> dict:
    return excerpt(
        "qingshan-board-2027-04",
        "证券代码：301466          证券简称：青杉科技          公告编号：2027-021\n\n"
        "青杉科技股份有限公司\n第二届董事会第一次会议决议公告\n\n"
        "（五）审议通过《关于使用部分闲置募集资金进行现金管理的议案》\n\n" + motion,
    )


def test_how_long_an_authorisation_holds_is_its_term():
    # 有效期 → 期限 (knowledge/vocabulary.py): 使用期限…12 个月内有效 is how long it holds
    notice = _cash_management(
        "同意公司使用额度不超过人民币 2.0 亿元的闲置募集资金购买保本型理财产品，使用期限自董事会"
        "审议通过之日起 6 个月内有效。"
    )
    first = answer("青杉科技拿多少闲置募资做现金管理？额度有效期多久？", [notice])[0]
    assert "2.0 亿元" in first and "6 个月" in first, first
    assert f"[[cite:{notice['id']}]]" in first, first
    untimed = _cash_management(
        "同意公司使用额度不超过人民币 2.0 亿元的闲置募集资金购买保本型理财产品。"
    )
    assert not_found(answer("青杉科技拿多少闲置募资做现金管理？额度有效期多久？", [untimed]))


PLACEMENT = excerpt(
    "岚溪生物股份有限公司 2027 年度向特定对象发行 A 股股票预案",
    "六、募集资金金额及用途\n"
    "本次向特定对象发行股票募集资金总额不超过 80,000.00 万元（含本数），扣除发行费用后的"
    "募集资金净额拟投资于以下项目：\n"
    "1、创新药研发中心建设项目，拟使用募集资金 36,000.00 万元；\n"
    "2、生物药产业化基地项目，拟使用募集资金 28,000.00 万元；\n"
    "3、补充流动资金，拟使用募集资金 16,000.00 万元。",
)
PROVISIONS = excerpt(
    "岚溪生物股份有限公司 2027 年半年度报告",
    "第三节 管理层讨论与分析\n报告期内，公司坏账核销金额 0.31 亿元，应收账款余额 6.20 亿元。",
)


def test_the_money_an_act_brought_is_the_act_s_funds():
    # 募来的钱 is the trade's 募资 (募集资金; reading._money_of_act)
    first = answer("岚溪生物定增募来的钱投哪几个项目？", [PLACEMENT])[0]
    for project in ("创新药研发中心建设项目", "生物药产业化基地项目", "补充流动资金"):
        assert project in first, first
    assert f"[[cite:{PLACEMENT['id']}]]" in first, first
    assert not_found(answer("岚溪生物可转债募来的钱投哪几个项目？", [PLACEMENT, PROVISIONS]))


def test_an_intention_before_the_act_asked_asks_nothing_of_its_own():
    # 准备投 (like 打算): the plan a report writes as 拟… (reading._without_intention)
    first = answer("岚溪生物定增募资准备投哪几个项目？", [PLACEMENT])[0]
    for project in ("创新药研发中心建设项目", "生物药产业化基地项目", "补充流动资金"):
        assert project in first, first
    assert f"[[cite:{PLACEMENT['id']}]]" in first, first
    # 准备 followed by no verb is a noun asked (坏账准备, not the 坏账核销 written)
    assert not_found(answer("岚溪生物上半年坏账准备是多少？", [PLACEMENT, PROVISIONS]))
