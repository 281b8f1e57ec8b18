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

