"""The floor on what the question names, probed (docs/extractive-provider.md, the relevance
floor): the head asked and each qualifier of two characters or more must be stated by the
unit or its section's heading — never "most of the characters" of the phrase — and a
headline after a colon (综述：息差降幅收窄, ## 云岭农商行：息差低位) is what a note claims, not
what a sentence or a row under it states. Each rule on a document of its own, driven
without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

INSURER = excerpt(
    "澄川保险集团股份有限公司 2026 年年度报告摘要",
    "五、经营情况讨论与分析\n"
    "（一）寿险业务\n"
    "2026 年，澄川人寿实现新业务价值 98.10 亿元，同比增长 11.20%。个人代理人月均人数 36,540 人，"
    "同比下降 5.1%。13 个月保单继续率为 93.8%，25 个月保单继续率为 88.4%。\n"
    "（二）财产险业务\n"
    "澄川财险实现原保险保费收入 312.40 亿元，同比增长 4.70%。综合成本率为 98.1%。",
)


def test_a_subsidiarys_sentence_does_not_state_the_groups_figure():
    # 澄川保险 asked: the 13-month persistency is 澄川人寿's (its section names it), not the
    # group's
    blocks = answer("澄川保险13个月保单继续率是多少？", [INSURER])
    assert not_found(blocks), blocks
    first = answer("澄川人寿13个月保单继续率是多少？", [INSURER])[0]
    assert "93.8" in first and "[[cite:" in first, first


def test_a_modifier_written_after_its_head_states_it():
    # 月均代理人 asked, 代理人月均人数 written: 月均 stands after its head; 澄川人寿 is named by
    # the section's first sentence
    first = answer("澄川人寿月均代理人有多少人？", [INSURER])[0]
    assert "36,540" in first and "[[cite:" in first, first


SECTOR = excerpt(
    "岚川证券 2026 年农商行中报综述",
    "# 岚川证券 2026 年农商行中报综述\n\n"
    "## 行业概览\n\n"
    "上半年农商行净息差 1.61%，同比下降 0.12 个百分点。\n\n"
    "## 重点公司\n\n"
    "柳塘农商行上半年营收同比增长 1.10%，不良率 1.25%。",
)


def test_a_holder_asked_is_not_stated_by_its_kind():
    # 柳塘农商行 asked: 农商行净息差 is the sector's, and 柳塘's sentence states no 净息差
    blocks = answer("柳塘农商行净息差是多少？", [SECTOR])
    assert not_found(blocks), blocks


NOTE = """# 城西证券 2026 年城商行中报综述：息差降幅收窄，资产质量稳中向好

## 重点公司估值表

| 公司 | 评级 | 目标价（元） | 2026E PB（倍） |
| --- | --- | --- | --- |
| 澜岸银行 | 买入 | 7.20 | 0.65 |
| 云溪农商行 | 中性 | 4.60 | 0.52 |

## 澜岸银行：规模扩张领先

上半年营收同比增长 3.95%，归母净利润同比增长 6.29%。净息差 1.71%，同比下降 0.14 个百分点。

## 云溪农商行：息差低位，资产质量有待观察

上半年营收同比下降 2.47%，归母净利润同比增长 0.86%。不良率 1.38%，较年初上升 0.05 个百分点。
"""


def test_a_notes_headline_does_not_make_a_row_state_its_topic():
    blocks = answer("云溪农商行上半年净息差是多少？", [excerpt("城西证券城商行中报综述", NOTE)])
    assert not_found(blocks), blocks


def test_a_sections_headline_is_a_claim_not_its_sentences_subject():
    # ## 云溪农商行：息差低位 says the margin is low; no sentence of the section states it
    blocks = answer("云溪农商行净息差是多少？", [excerpt("城西证券城商行中报综述", NOTE)])
    assert not_found(blocks), blocks
    first = answer("澜岸银行净息差是多少？", [excerpt("城西证券城商行中报综述", NOTE)])[0]
    assert "1.71" in first and "[[cite:" in first, first


QUARTER_NOTE = excerpt(
    "汀岸科技 2026 年三季报点评：业绩稳健",
    "# 汀岸科技 2026 年三季报点评：业绩稳健\n\n"
    "## 核心观点\n\n"
    "公司前三季度实现营业收入 21.40 亿元，同比增长 12.30%。",
)


def test_the_third_quarter_is_not_the_year_to_date():
    blocks = answer("汀岸科技第三季度营业收入是多少？", [QUARTER_NOTE])
    assert not_found(blocks), blocks


REPORT = excerpt(
    "泊岸机械股份有限公司 2026 年第三季度报告",
    "三、其他提醒事项\n"
    "1. 新签订单：年初至报告期末，公司新签订单 28.4 亿元，同比增长 17.5%，其中海外订单 "
    "8.6 亿元，占新签订单的 30.3%；\n"
    "2. 研发投入：年初至报告期末研发费用 12,310.20 万元，占营业收入的 6.12%；",
)


def test_an_amount_asked_is_stated_by_a_figure_in_yuan():
    first = answer("泊岸机械海外订单金额是多少？", [REPORT])[0]
    assert "8.6 亿元" in first and "[[cite:" in first, first


def test_a_clause_of_the_first_sentence_names_the_sections_subject_too():
    # the first sentence cut at ；: 新业务价值率为 21.4% is 澄川人寿's
    doc = excerpt(
        "澄川保险集团股份有限公司 2026 年年度报告摘要",
        "（一）寿险业务\n2026 年，澄川人寿实现新业务价值 98.10 亿元，同比增长 11.20%；新业务价值率为"
        " 21.4%，同比上升 1.5 个百分点。",
    )
    first = answer("澄川人寿新业务价值率多少？", [doc])[0]
    assert "21.4%" in first and "98.10" not in first and "[[cite:" in first, first


EVENT = excerpt(
    "汀岸科技 2026 年三季报点评：业绩稳健",
    "# 汀岸科技 2026 年三季报点评：业绩稳健\n\n"
    "**事件**：公司发布 2026 年三季报，前三季度实现营业收入 21.40 亿元，同比增长 12.30%；"
    "扣非归母净利润 1.96 亿元，同比增长 9.80%。其中 Q3 单季实现营收 7.62 亿元，同比增长 14.10%；"
    "归母净利润 0.81 亿元，同比增长 11.50%。",
)


def test_a_sentence_inside_an_enumeration_is_an_item_of_its_own():
    # 。 ends the 扣非 item: the quarter's revenue is quoted alone
    first = answer("汀岸科技Q3单季营收是多少？", [EVENT])[0]
    assert "7.62 亿元" in first and "扣非" not in first and "[[cite:" in first, first


def test_a_report_named_by_its_period_is_no_period_of_the_sentence():
    # 公司发布 2026 年三季报，前三季度实现… states the year to date
    first = answer("汀岸科技第三季度单季营收多少？", [EVENT])[0]
    assert "7.62 亿元" in first and "21.40" not in first, first


FOLLOWED = [
    excerpt(
        "溪川电子股份有限公司 2026 年第三季度报告",
        "一、主要财务数据\n\n项目 | 本报告期 | 年初至报告期末\n\n"
        "归属于上市公司股东的净利润 | 1,420.38 | 3,761.54",
    ),
    excerpt(
        "溪川电子股份有限公司 2026 年第三季度报告",
        "合并利润表（节选）  2026 年 1—9 月\n\n项目 | 本期发生额 | 上期发生额\n\n"
        "归属于母公司股东的净利润 | 3,761.54 | 3,158.83",
    ),
]


def test_a_figure_of_the_vocabulary_is_stated_by_any_of_its_spellings():
    # 归属于母公司股东的净利润 is 归属于上市公司股东的净利润: 上市 is no qualifier of its own
    history = [{"question": "溪川电子前三季度归母净利润多少万元？", "answer": "3,761.54 万元"}]
    first = answer("上年同期呢？", FOLLOWED, history)[0]
    assert "3,158.83" in first and "[[cite:" in first, first


def test_a_qualifier_the_documents_write_elsewhere_is_not_stated_by_its_stem():
    # 澄川财险 asked: the sentence's 澄川 is 澄川人寿's, and 澄川财险 is written elsewhere
    doc = excerpt(
        "澄川保险集团股份有限公司 2026 年年度报告摘要",
        "五、经营情况讨论与分析\n澄川人寿 13 个月保单继续率为 93.8%。澄川财险综合成本率为 98.1%。",
    )
    blocks = answer("澄川财险13个月保单继续率是多少？", [doc])
    assert not_found(blocks), blocks


def test_text_under_no_heading_has_no_sections_subject():
    # the excerpt's first sentence names 澄川人寿; the next, under no heading, is the group's
    doc = excerpt(
        "澄川保险集团股份有限公司 2026 年年度报告摘要",
        "澄川人寿实现新业务价值 98.10 亿元。集团综合偿付能力充足率为 215.3%。",
    )
    first = answer("澄川保险综合偿付能力充足率是多少？", [doc])[0]
    assert "215.3%" in first and "[[cite:" in first, first


DEPOSITS = excerpt(
    "溪岸银行股份有限公司 2026 年半年度报告摘要",
    "三、经营情况\n"
    "截至报告期末，本行各项贷款余额 2,418.60 亿元，同比增长 8.10%。各项存款余额 3,102.55 亿元，"
    "比年初增长 5.20%。",
)


def test_a_word_written_with_one_character_changed_names_another_thing():
    # 各项存款余额 is not 各项贷款余额: 存 in 贷's place, the rest written whole (and the
    # loans' growth is 同比, not 比年初)
    blocks = answer("溪岸银行各项贷款余额比年初增长多少？", [DEPOSITS])
    assert not_found(blocks), blocks
    first = answer("溪岸银行各项存款余额比年初增长多少？", [DEPOSITS])[0]
    assert "5.20%" in first and "[[cite:" in first, first


FUND_INDICATORS = excerpt(
    "松溪稳进混合型证券投资基金 2026 年第三季度报告",
    "§3 主要财务指标和基金净值表现\n\n"
    "主要财务指标 | 松溪稳进混合 A | 松溪稳进混合 C\n\n"
    "1.本期已实现收益 | 81,204,330.12 | 6,390,218.47\n\n"
    "4.期末基金资产净值 | 2,418,903,122.50 | 204,117,380.66\n\n"
    "5.期末基金份额净值 | 1.2175 | 1.2031",
)


def test_a_label_with_another_word_inside_the_phrase_asked_is_another_rows():
    # 期末基金资产净值 asked: 期末基金份额净值 writes it but for 份额 in the place of 资产 —
    # the unit's value per share, not the fund's assets
    first = answer("松溪稳进C类份额的期末基金资产净值是多少？", [FUND_INDICATORS])[0]
    assert "204,117,380.66" in first and "4.期末基金资产净值" in first, first
    assert "1.2031" not in first.split("\n")[0], first
    only_shares = excerpt(
        "松溪稳进混合型证券投资基金 2026 年第三季度报告",
        "主要财务指标 | 松溪稳进混合 A | 松溪稳进混合 C\n\n5.期末基金份额净值 | 1.2175 | 1.2031",
    )
    assert not_found(answer("松溪稳进C类份额的期末基金资产净值是多少？", [only_shares]))
    # the row asked by its own words still answers
    first = answer("松溪稳进A类的期末基金份额净值是多少？", [only_shares])[0]
    assert "1.2175" in first and "[[cite:" in first, first


def test_a_share_class_asks_no_share():
    # C份额 names a class of the fund's units; no 占比 / 比例 is asked of a whole
    from agents.providers.reading import read_question

    question = read_question("C类份额的期末基金资产净值是多少？", "松溪稳进混合 C 份额")
    assert not question.asks_share
    assert read_question("C类份额占基金总份额的比例是多少？", "份额").asks_share
