"""A second stranger's questions over a board's resolutions, a bank's report, a sector note,
an insurer's report and an incentive plan — lists and tables asked whole, comparisons and
follow-ups: the documents state the thing, the reader refused it, answered in part or cited
another thing (a deputy's post by the chair's). One test per rule, each on a document of its
own (not the sets' fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

BOARD = excerpt(
    "岫石科技股份有限公司",
    "二、董事会会议审议情况\n\n"
    "（一）审议通过《关于选举公司第三届董事会董事长的议案》\n\n"
    "同意选举岳知行先生为公司第三届董事会董事长，任期三年。\n\n"
    "（二）审议通过《关于聘任公司董事会秘书的议案》\n\n"
    "经董事长提名，同意聘任陶若溪女士为公司董事会秘书，任期与第三届董事会任期一致。",
)


# -- a one-character modifier before the head names another post ---------------------------


def test_a_deputy_is_not_stated_by_the_post_it_deputizes():
    # 副 before 董事长: the text writes 董事长 only after other characters (董事会董事长,
    # 经董事长提名), so 副董事长 is another post, stated nowhere
    assert not_found(answer("岫石科技第三届董事会副董事长是谁？", [BOARD]))
    assert not_found(answer("岫石科技副董事长是谁？", [BOARD]))
    # (the last character of the word before, 至今 of 年初至今, modifies no head: answered)
    ytd = excerpt(
        "岫石科技股份有限公司 2026 年第三季度报告",
        "三、其他提醒事项\n3. 研发投入：年初至报告期末研发费用 9,402.18 万元，占营业收入的 7.20%。",
    )
    first = answer("岫石科技年初至今研发费用花了多少？", [ytd])[0]
    assert "9,402.18" in first, first
    # (the post written: answered)
    first = answer("岫石科技第三届董事会董事长是谁？", [BOARD])[0]
    assert "岳知行" in first, first


# -- a note's short form states the full name asked -----------------------------------------

QUARTER_NOTE = excerpt(
    "岫川电子（688900）2026 年三季报点评：盈利修复",
    "## 核心观点\n\n"
    "**事件**：公司发布 2026 年三季报，前三季度实现营业收入 21.40 亿元，同比增长 9.10%。"
    "其中 Q3 单季实现营收 8.12 亿元，同比增长 12.50%，业绩符合预期。",
)


def test_a_short_form_of_the_vocabulary_states_the_full_name_asked():
    # 营收 is the vocabulary's short form of 营业收入 (abbreviations: 营…收…): the note's Q3
    # sentence states the 第三季度营业收入 asked (reading._short_forms)
    first = answer("岫川电子第三季度营业收入是多少？", [QUARTER_NOTE])[0]
    assert "8.12" in first, first
    # (营业外收入 is another thing; 收入 is no short form: no wider word states it)
    assert not_found(answer("岫川电子第三季度营业外收入是多少？", [QUARTER_NOTE]))
    assert not_found(answer("岫川电子第三季度营业成本是多少？", [QUARTER_NOTE]))


# -- a table's row labelled by a company is about that company -------------------------------

SECTOR = excerpt(
    "农商行 2027 年中报综述：规模稳健，息差企稳",
    "## 重点公司估值表\n\n"
    "公司 | 代码 | 评级 | 目标价（元） | 收盘价（元） | 2027E PB（倍）\n\n"
    "汐川银行 | 601811 | 买入 | 6.40 | 5.12 | 0.61\n\n"
    "岭东银行 | 601822 | 增持 | 8.90 | 7.35 | 0.55\n\n"
    "岚溪农商行 | 603511 | 中性 | 4.20 | 3.96 | 0.68\n\n"
    "资料来源：Wind",
)
XICHUAN = excerpt(
    "汐川银行股份有限公司 2027 年半年度报告摘要",
    "报告期内，本行实现营业收入 61.20 亿元，同比增长 3.10%；不良贷款率为 1.12%。",
)


def test_a_row_labelled_by_a_company_is_about_that_company():
    # 汐川银行 has a report of its own; its 收盘价 is only the note's valuation row, which
    # is about 汐川银行 as a section headed by its name is (selection.section_about)
    first = answer("汐川银行的收盘价是多少？", [XICHUAN, SECTOR])[0]
    assert "5.12" in first and "7.35" not in first, first
    # (the note's other rows are not about it: a figure it does not have stays not found)
    assert not_found(answer("汐川银行的2027E PE是多少？", [XICHUAN, SECTOR]))


def test_a_follow_up_naming_a_company_asks_in_the_place_of_the_row_beside_it():
    # 汐川银行呢？ after 岭东银行的收盘价: the valuation table's rows name both, so 收盘价 is
    # asked of 汐川银行 — not of 岭东银行 and 汐川银行 together (selection.rows_alike)
    asked = [{"question": "岭东银行的收盘价是多少？", "answer": "7.35"}]
    first = answer("汐川银行呢？", [XICHUAN, SECTOR], history=asked)[0]
    assert "5.12" in first and "7.35" not in first, first


# -- the kind counted names no entity: 三家银行 asks among the rows --------------------------


def test_the_kind_after_a_count_asks_every_row_of_it():
    # 银行 after 三家 is the kind asked among, not 汐川银行's report (whose name ends with
    # it), nor a word each row must write (岚溪农商行 | …): every row's 目标价
    # (sources.entity_terms_of, reading.topic_phrases: grammar.AMONG_KIND)
    first = answer("三家银行的目标价分别是多少？", [XICHUAN, SECTOR])[0]
    assert all(f in first for f in ("6.40", "8.90", "4.20")), first
    first = answer("哪家银行的2027E PB最高？", [XICHUAN, SECTOR])[0]
    assert "岚溪农商行" in first and "0.68" in first, first
    # (a figure no row has stays not found)
    assert not_found(answer("三家银行的杠杆率分别是多少？", [XICHUAN, SECTOR]))


# -- each of a kind the rows' labels state, over both parts of a split table ---------------

PLAN = "汀岚科技股份有限公司 2027 年限制性股票激励计划（草案）摘要"
PLAN_FIRST = excerpt(
    PLAN,
    "## 五、限售期及解除限售安排\n\n"
    "解除限售安排 | 解除限售时间 | 解除限售比例\n\n"
    "第一个解除限售期 | 自授予登记完成之日起 12 个月后的首个交易日起至 24 个月内的最后一个交易日止 | 50%",
)
PLAN_SECOND = excerpt(
    PLAN,
    "第二个解除限售期 | 自授予登记完成之日起 24 个月后的首个交易日起至 36 个月内的最后一个交易日止 | 30%\n\n"
    "第三个解除限售期 | 自授予登记完成之日起 36 个月后的首个交易日起至 48 个月内的最后一个交易日止 | 20%\n\n"
    "## 六、公司层面业绩考核要求\n\n"
    "以 2026 年营业收入为基数，2027 年营业收入增长率不低于 18%。",
)


def test_each_of_a_kind_named_by_row_labels_reads_both_parts_of_a_split_table():
    # 各解除限售期: every row whose label states 解除限售期, the part that borrowed the header
    # included (selection.answering_rows)
    first = answer("汀岚科技各解除限售期的解除限售比例分别是多少？", [PLAN_FIRST, PLAN_SECOND])[0]
    assert all(f in first for f in ("50%", "30%", "20%")), first
    # (one period asked: its row alone)
    first = answer("汀岚科技第二个解除限售期的解除限售比例是多少？", [PLAN_FIRST, PLAN_SECOND])[0]
    assert "30%" in first and "50%" not in first and "20%" not in first, first


# -- a follow-up's thing labelling a row of the table the earlier row is in ----------------

INSURER = excerpt(
    "汐岸保险集团股份有限公司 2027 年年度报告摘要",
    "三、偿付能力\n"
    "单位：%\n"
    "公司 本季度末（2027 年 12 月 31 日） 上季度末（2027 年 9 月 30 日）\n"
    " 核心偿付能力充足率 综合偿付能力充足率 核心偿付能力充足率 综合偿付能力充足率\n"
    "集团合并 151.2 236.4 147.9 230.1\n"
    "汐岸人寿 121.6 209.8 118.2 203.7\n"
    "汐岸财险 182.5 251.3 176.0 246.9\n"
    "在最近一期风险综合评级中，汐岸人寿为 AA 类，汐岸财险为 A 类。",
)
PROPERTY = excerpt(
    "汐岸保险集团股份有限公司 2027 年年度报告摘要",
    "（二）财产险业务\n"
    "汐岸财险实现原保险保费收入 412.30 亿元，同比增长 5.10%，其中车险保费收入 240.12 亿元。",
)
SOLVENCY_ASKED = [{"question": "汐岸人寿的核心偿付能力充足率是多少？", "answer": "121.6"}]


def test_a_row_of_the_table_the_earlier_row_is_in_is_asked_its_figure():
    # 汐岸财险 and 集团合并 label rows of the table 汐岸人寿 does: 汐岸财险呢？ asks its
    # 核心偿付能力充足率 — not the rating sentence that merely names it — and 集团合并呢？
    # that cell, not the row whole (selection.rows_alike)
    first = answer("汐岸财险呢？", [INSURER, PROPERTY], history=SOLVENCY_ASKED)[0]
    assert "：182.5" in first and "A 类" not in first, first
    first = answer("集团合并呢？", [INSURER, PROPERTY], history=SOLVENCY_ASKED)[0]
    assert "：151.2" in first, first
    # (a thing labelling no row of it is not swapped in)
    assert not_found(answer("汐岸资管呢？", [INSURER, PROPERTY], history=SOLVENCY_ASKED))
