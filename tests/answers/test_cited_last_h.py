"""Cited wrong answers: a figure of another thing quoted with a verified citation — an
adjusted figure (扣除非经常性损益后的净利润) for the figure it adjusts. Each must be answered
with the thing asked or "not found" with nothing cited, while what the document does state
is still answered. One test per rule, each on a document of its own (not the sets'
fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

# -- an adjusted figure is not the figure it adjusts ----------------------------------------

ADJUSTED = excerpt(
    "岚溪食品股份有限公司 2026 年半年度报告",
    "第二节 主要会计数据和财务指标\n"
    "报告期内，公司实现营业收入 24.6 亿元，同比增长 7.1%；\n"
    "归属于上市公司股东的净利润 1.9 亿元，同比增长 5.2%；\n"
    "扣除非经常性损益后的净利润 1.6 亿元。\n"
    "报告期末资产负债率为 38.4%，较上年末下降 1.2 个百分点。\n",
)


def test_an_adjusted_figure_does_not_answer_the_figure_it_adjusts():
    # 扣除非经常性损益后的净利润 ends with 净利润 but names the figure after an adjustment;
    # the report writes the net profit unadjusted too, and that one is asked
    blocks = answer("岚溪食品资产负债率多少？净利润呢", [ADJUSTED])
    text = "".join(blocks)
    assert "1.9 亿元" in text and "1.6 亿元" not in text and "38.4%" in text, blocks
    # the adjusted one is answered when asked
    first = answer("岚溪食品扣非净利润多少？", [ADJUSTED])[0]
    assert "1.6 亿元" in first and "[[cite:" in first, first
    first = answer("岚溪食品扣除非经常性损益后的净利润是多少？", [ADJUSTED])[0]
    assert "1.6 亿元" in first and "[[cite:" in first, first
    first = answer("岚溪食品净利润多少？", [ADJUSTED])[0]
    assert "1.9 亿元" in first and "[[cite:" in first, first


# -- a figure per head is not the figure it divides ------------------------------------------

PER_HEAD = excerpt(
    "汐川人寿保险股份有限公司 2026 年年度报告摘要",
    "五、经营情况讨论与分析\n"
    "（一）寿险业务\n"
    "个人代理人月均人数 31,420 人，同比下降 4.1%，人均新业务价值同比增长 12.6%。\n"
    "13 个月保单继续率为 93.8%。\n",
)


def test_a_figure_per_head_does_not_answer_the_figure_it_divides():
    # 人均新业务价值 is the value per agent, and its growth is not the value asked
    blocks = answer("汐川人寿新业务价值多少？", [PER_HEAD])
    assert not_found(blocks) and "[[cite:" not in "".join(blocks), blocks
    # the per-head figure answers when asked
    first = answer("汐川人寿人均新业务价值同比增长多少？", [PER_HEAD])[0]
    assert "12.6%" in first and "[[cite:" in first, first
    first = answer("汐川人寿13个月保单继续率多少？", [PER_HEAD])[0]
    assert "93.8%" in first and "[[cite:" in first, first


# -- the author of a document asked of ranks nothing ------------------------------------------

NOTE = excerpt(
    "岚江机电（603999）2026 年三季报点评：订单高增",
    "# 岚江机电（603999）2026 年三季报点评：订单高增\n\n"
    "溪岳证券研究所 | 公司研究 | 机械设备 | 2026 年 10 月 29 日\n\n"
    "## 核心观点\n\n**事件**：公司前三季度实现营业收入 35.29 亿元，同比增长 15.64%。\n\n"
    "## 风险提示\n\n1. 下游行业资本开支不及预期；\n2. 海外市场拓展不及预期；\n"
    "3. 原材料价格大幅波动。\n\n"
    "分析师：周屿（执业证书编号：S0960524070003）\n\n"
    "本报告仅供溪岳证券股份有限公司的客户使用。本报告所载资料的来源被认为是可靠的，"
    "但本公司不保证其准确性或完整性。\n",
)


def test_a_notes_author_does_not_pick_its_disclaimer():
    # 溪岳证券 asked as who wrote the note: its byline names it, and its disclaimer — which
    # is not what the note says of the company — names it again
    first = answer("溪岳证券那篇岚江点评的风险提示", [NOTE])[0]
    assert "不及预期" in first or "大幅波动" in first, first
    assert "仅供" not in first and "[[cite:" in first, first
    first = answer("岚江点评的风险提示", [NOTE])[0]
    assert "仅供" not in first and "[[cite:" in first, first
    first = answer("溪岳证券那篇岚江点评的营业收入多少", [NOTE])[0]
    assert "35.29 亿元" in first and "[[cite:" in first, first
