"""Leftovers of the probe rounds over a broker's note on several members of a kind: a chain
of bare follow-ups, each member's figure asked at once, and the risks a note points out."""

from tests.answers.reader import answer, excerpt, not_found

NOTE = "港口行业 2027 年中报综述：吞吐量回暖，盈利分化"
VALUATION = excerpt(
    NOTE,
    "## 重点公司估值表\n\n"
    "公司 | 代码 | 评级 | 目标价（元） | 收盘价（元） | 2027E PE\n"
    "东湾港务 | 601736 | 增持 | 6.80 | 6.12 | 11.4\n"
    "北礁港口 | 600917 | 买入 | 4.90 | 4.05 | 9.8\n"
    "南屿港 | 603162 | 中性 | 3.30 | 3.21 | 14.6",
)
MEMBERS = excerpt(
    NOTE,
    "## 东湾港务：吞吐量稳健，费率承压\n\n"
    "上半年营收同比增长 4.10%，集装箱吞吐量同比增长 6.2%。毛利率 38.6%，同比下降 1.2 个百分点。"
    "维持“增持”评级。\n\n"
    "## 北礁港口：散货回暖，盈利改善\n\n"
    "上半年营收同比增长 7.35%，散货吞吐量同比增长 9.8%。毛利率 31.4%，同比提升 2.1 个百分点。"
    "维持“买入”评级。\n\n"
    "## 南屿港：航线拓展，成本上行\n\n"
    "上半年营收同比下降 1.26%，集装箱航线新增 5 条。资产负债率 46.2%，较年初上升 1.5 个百分点。"
    "首次覆盖给予“中性”评级。",
)


def test_a_bare_follow_up_after_a_bare_follow_up_asks_the_first_questions_measure():
    # 南屿港呢？ put 南屿港 in the place of 东湾港务 in the question it followed; 北礁港口呢？
    # goes on asking that question's measure (毛利率), not of both names
    history = [
        {"question": "东湾港务的毛利率是多少？", "answer": "38.6%"},
        {"question": "南屿港呢？", "answer": "未找到"},
    ]
    first = answer("北礁港口呢？", [VALUATION, MEMBERS], history=history)[0]
    assert "31.4%" in first and "38.6%" not in first.split("**依据**")[0], first


def test_a_follow_up_that_asks_a_measure_of_its_own_is_what_the_chain_goes_on_asking():
    # 北礁港口的资产负债率呢？ is no bare name: 南屿港呢？ asks its 资产负债率, not 毛利率
    history = [
        {"question": "东湾港务的毛利率是多少？", "answer": "38.6%"},
        {"question": "北礁港口的资产负债率呢？", "answer": "未找到"},
    ]
    first = answer("南屿港呢？", [VALUATION, MEMBERS], history=history)[0]
    assert "46.2%" in first and "毛利率" not in first.split("**依据**")[0], first


def test_each_members_figure_is_answered_from_its_own_section_with_none_ranked():
    # 分别 over a kind's members (三家港口): every member's section answers for it, as a
    # superlative over them is answered — but nothing asked the highest or lowest
    first = answer("三家港口的毛利率分别是多少？", [VALUATION, MEMBERS])[0]
    head = first.split("**依据**")[0]
    assert "东湾港务：毛利率 38.6%" in head and "北礁港口：毛利率 31.4%" in head, first
    assert "南屿港：检索到的摘录没有写明" in head, first
    assert "最高" not in head and "最低" not in head, first


def test_each_members_figure_no_section_states_is_not_found():
    blocks = answer("三家港口的净利率分别是多少？", [VALUATION, MEMBERS])
    assert not_found(blocks), blocks[0]
