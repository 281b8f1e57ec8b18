"""How a question's grammar decides what is asked — the act an amount is asked of, the
qualifier a count names, the thing a count counts — each rule on a document of its own
(not the evaluation sets' fixtures). Driven without a database (tests/answers/reader.py)."""

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
