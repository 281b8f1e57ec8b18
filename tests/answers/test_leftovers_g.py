"""Headings, glued names and the author of a note (docs/extractive-provider.md, "Rules read
from the evaluation rounds"): each rule on a small document of its own, driven without a
database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

# -- a name before 给 / 向 is a note's author only where a judgement is asked ----------------

LOANS = excerpt(
    "澍桥科技股份有限公司 2026 年半年度报告摘要",
    "一、公司基本情况\n\n截至报告期末，公司控股股东为澍桥控股集团有限公司，持有公司 32.15% 的股份。\n\n"
    "二、关联交易\n\n报告期内，公司向全资子公司澍桥精密提供的借款余额为 8,600 万元，"
    "利率参照同期贷款市场报价利率。",
)


def test_a_lender_before_向_is_no_author_when_no_judgement_is_asked():
    # (the company's own loan to its subsidiary is not the controlling holder's to it)
    blocks = answer("控股股东向公司提供的借款余额是多少？", [LOANS])
    assert not_found(blocks) and "8,600" not in blocks[0]


def test_a_lender_before_给_is_no_author_when_no_judgement_is_asked():
    blocks = answer("控股股东给公司提供的借款余额是多少？", [LOANS])
    assert not_found(blocks) and "8,600" not in blocks[0]


# -- a short name glued to a term: the cut into the name and a word of the vocabulary ---------

COLD_STORES = excerpt(
    "溯岭冷链物流股份有限公司 2026 年半年度报告",
    "一、经营情况\n\n截至报告期末，公司冷链仓储面积合计 84.3 万平方米，较上年末增加 6.1 万平方米；"
    "冷藏车辆 1,120 台。",
)


def test_a_short_name_glued_to_a_term_is_cut_into_the_name_and_the_term():
    # (溯岭冷|库面积 leaves 库面积 unread; 溯岭|冷库面积 is the name and 冷库 ↔ 冷链仓储)
    first = answer("溯岭冷库面积多大？", [COLD_STORES])[0]
    assert "84.3 万平方米" in first and "[[cite:" in first


# -- a numbered heading is never an answer on its own ---------------------------------------

_WARNING_HEADING = "4.3 报告期内基金持有人数或基金资产净值预警说明"
_FUND = "澈溪稳健回报混合型证券投资基金 2026 年第二季度报告"
_BEFORE = "4.2 管理人对报告期内基金的投资策略和运作分析\n\n本基金报告期内维持中性仓位。\n\n"


def test_a_numbered_heading_asked_is_answered_by_the_paragraph_under_it():
    fund = excerpt(
        _FUND,
        f"{_BEFORE}{_WARNING_HEADING}\n\n"
        "本报告期内，本基金未出现连续二十个工作日基金份额持有人数量不满二百人或者基金资产净值"
        "低于五千万元的情形。\n\n§5 投资组合报告",
    )
    first = answer("澈溪稳健回报报告期内基金持有人数或基金资产净值预警说明是什么？", [fund])[0]
    assert "本基金未出现连续二十个工作日" in first and "[[cite:" in first
    assert _WARNING_HEADING not in first


def test_a_numbered_heading_with_nothing_under_it_is_not_found():
    fund = excerpt(_FUND, f"{_BEFORE}{_WARNING_HEADING}")
    assert not_found(answer("澈溪稳健回报基金资产净值预警说明写了什么？", [fund]))


# -- a total asked is the whole's own figure, not its first item's ---------------------------

PLACEMENT = excerpt(
    "岑溪电子股份有限公司 2026 年度向特定对象发行 A 股股票预案",
    "五、募集资金金额及用途\n\n本次向特定对象发行股票募集资金总额不超过 86,000.00 万元（含本数），"
    "扣除发行费用后的募集资金净额拟投资于以下项目：\n\n"
    "1、岑溪电子功率模块扩产项目，项目投资总额 52,300.00 万元，拟使用募集资金 46,000.00 万元；\n\n"
    "2、研发中心建设项目，项目投资总额 21,500.00 万元，拟使用募集资金 16,000.00 万元；\n\n"
    "3、补充流动资金，项目投资总额 24,000.00 万元，拟使用募集资金 24,000.00 万元。",
)


def test_a_total_asked_is_the_lead_ins_own_figure_not_the_first_items():
    for question in ("岑溪电子定增募集资金总额是多少？", "岑溪定增打算募多少钱？"):
        first = answer(question, [PLACEMENT])[0]
        assert "86,000.00" in first and "[[cite:" in first
        assert "46,000.00" not in first


def test_an_item_named_by_its_label_still_answers_for_itself():
    first = answer("岑溪电子研发中心建设项目拟使用募集资金多少？", [PLACEMENT])[0]
    assert "16,000.00" in first and "[[cite:" in first
