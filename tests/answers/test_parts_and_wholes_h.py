"""A part never answers for the whole: a row of a table whose rows are parts of a whole
(segments, regions, subsidiaries) is not the whole a question naming no row asks of — the
total row is, or the consolidated row; a share of one whole is not a share of another. One
test per rule, each on a document of its own (not the sets' fixtures), driven without a
database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

GROUP = "青岑保险集团股份有限公司 2026 年年度报告摘要"
SEGMENT_HEAD = (
    "## 三、分部经营情况\n\n"
    "单位：百万元\n\n"
    "分部 | 营业收入 | 分部净利润 | 分部资产总额\n\n"
    "寿险 | 82,410.55 | 6,120.30 | 904,318.20\n\n"
    "财产险 | 31,206.74 | 1,884.12 | 61,025.47\n\n"
    "抵销及其他 | -612.08 | -95.40 | -4,210.66\n\n"
)
SEGMENTS = excerpt(GROUP, SEGMENT_HEAD)
SEGMENTS_TOTAL = excerpt(GROUP, SEGMENT_HEAD + "合计 | 113,005.21 | 7,909.02 | 961,133.01\n\n")


# -- a part row is not the whole -------------------------------------------------------------


def test_a_question_naming_no_row_of_a_table_of_parts_is_not_answered_by_one_part():
    # 营业收入 asked of the group: 寿险's row is one segment's, not the group's
    assert not_found(answer("青岑保险营业收入多少？", [SEGMENTS]))
    # the total row answers for the whole
    first = answer("青岑保险营业收入多少？", [SEGMENTS_TOTAL])[0]
    assert "113,005.21" in first and "82,410.55" not in first.split("**依据**")[0], first


def test_a_part_named_or_every_part_asked_is_still_answered_by_its_rows():
    first = answer("青岑保险寿险营业收入多少？", [SEGMENTS])[0]
    assert "寿险（营业收入）：82,410.55" in first, first
    first = answer("青岑保险各分部的营业收入分别是多少？", [SEGMENTS])[0]
    assert "82,410.55" in first and "31,206.74" in first, first


def test_the_rows_kind_before_a_column_names_every_row_asked_for():
    # 各分部营业收入: 分部 is what the rows are (the label column's header), 营业收入 the column
    first = answer("青岑保险各分部营业收入分别是多少？", [SEGMENTS_TOTAL])[0]
    assert "82,410.55" in first and "31,206.74" in first, first


SOLVENCY = excerpt(
    GROUP,
    "## 五、偿付能力\n\n"
    "公司 | 核心偿付能力充足率（%） | 综合偿付能力充足率（%）\n\n"
    "青岑人寿 | 121.4 | 208.3\n\n"
    "青岑财险 | 168.2 | 240.7\n\n"
    "集团合并 | 139.5 | 226.1\n\n",
)


def test_the_consolidated_row_answers_for_the_group_its_subsidiaries_rows_do_not():
    first = answer("青岑保险综合偿付能力充足率多少？", [SOLVENCY])[0]
    head = first.split("**依据**")[0]
    assert "集团合并" in head and "226.1" in head, first
    assert "208.3" not in head and "240.7" not in head, first
    # a subsidiary named is its own row
    first = answer("青岑财险综合偿付能力充足率多少？", [SOLVENCY])[0]
    assert "240.7" in first.split("**依据**")[0], first


# -- a share is of its own whole ---------------------------------------------------------------

PLAN = excerpt(
    "汀蓝软件股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 二、拟授予的限制性股票数量\n\n"
    "本激励计划拟向激励对象授予限制性股票 500.00 万股，约占本激励计划草案公告时公司股本总额"
    " 25,000.00 万股的 2.00%。其中首次授予 420.00 万股，占本激励计划拟授予总量的 84.00%；"
    "预留 80.00 万股，占本激励计划拟授予总量的 16.00%。",
)


def test_a_share_asked_of_one_whole_is_not_answered_by_a_share_of_another():
    # 首次授予's share of 拟授予总量 is not its share of 总股本, which the plan does not state
    assert not_found(answer("汀蓝软件首次授予占总股本比例多少？", [PLAN]))
    # 股本总额 is 总股本: the grant's share of it is stated
    first = answer("汀蓝软件拟授予限制性股票占总股本比例多少？", [PLAN])[0]
    assert "2.00%" in first.split("**依据**")[0], first
    first = answer("汀蓝软件首次授予占拟授予总量的比例是多少？", [PLAN])[0]
    assert "84.00%" in first.split("**依据**")[0], first


PAYOUT = "汀蓝软件股份有限公司 2026 年年度权益分派实施公告"
PER_SHARE = excerpt(
    PAYOUT,
    "重要内容提示：\n\n每股分配比例：A 股每股现金红利 0.25 元（含税）\n\n"
    "本次利润分配以方案实施前的公司总股本 250,000,000 股为基数，每股派发现金红利 0.25 元"
    "（含税），共计派发现金红利 62,500,000.00 元。",
)


def test_a_share_of_a_whole_no_text_states_is_not_a_per_share_amount():
    # 每股分配比例 is an amount per share, not the dividend's share of 净利润
    assert not_found(answer("汀蓝软件的现金分红占净利润比例？", [PER_SHARE]))
    stated = excerpt(
        PAYOUT,
        "本年度现金分红总额 62,500,000.00 元，占本年度归属于上市公司股东的净利润的 31.25%。",
    )
    first = answer("汀蓝软件的现金分红占净利润比例？", [stated])[0]
    assert "31.25%" in first, first


# -- what the caption says every row is -------------------------------------------------------

TARGETS = excerpt(
    "汀蓝软件股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 六、公司层面业绩考核要求\n\n"
    "以 2026 年营业收入为基数，各年度业绩考核目标如下：\n\n"
    "解除限售期 | 考核年度 | 营业收入增长率\n\n"
    "第一个解除限售期 | 2027 年 | 不低于 25%\n\n"
    "第二个解除限售期 | 2028 年 | 不低于 50%\n\n"
    "第三个解除限售期 | 2029 年 | 不低于 80%\n\n",
)


def test_what_the_caption_says_every_row_is_asked_is_answered_by_every_row():
    # 业绩考核目标 is what the lead-in says all the rows are: the table whole, not its first row
    first = answer("汀蓝软件的业绩考核目标是什么？", [TARGETS])[0]
    head = first.split("**依据**")[0]
    assert all(t in head for t in ("不低于 25%", "不低于 50%", "不低于 80%")), first
    # a row named by its year or its label is that row alone
    head = answer("汀蓝软件2028年的业绩考核目标是什么？", [TARGETS])[0].split("**依据**")[0]
    assert "不低于 50%" in head and "不低于 25%" not in head, head
    first = answer("汀蓝软件第三个解除限售期的营业收入增长率目标？", [TARGETS])[0]
    assert "不低于 80%" in first.split("**依据**")[0], first


GRANTEES = excerpt(
    "汀蓝软件股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 三、激励对象的分配\n\n"
    "姓名 | 职务 | 获授的限制性股票数量（万股） | 占授予总数的比例\n\n"
    "钟予宁 | 董事、总经理 | 36.00 | 7.20%\n\n"
    "陆青禾 | 副总经理、财务总监 | 22.00 | 4.40%\n\n"
    "核心骨干（140 人） | — | 362.00 | 72.40%\n\n"
    "合计 | — | 500.00 | 100.00%\n\n",
)


def test_a_row_the_conversation_is_on_is_named_by_a_pronoun():
    # 她 is whom the question before asked for (财务总监): her row, not the table's total
    history = [{"question": "汀蓝软件财务总监是谁？"}]
    first = answer("她获授多少万股？", [GRANTEES], history=history)[0]
    assert "22.00" in first.split("**依据**")[0] and "500.00" not in first, first
    # asked of no one, the grant is the whole's
    first = answer("汀蓝软件获授的限制性股票数量是多少万股？", [GRANTEES])[0]
    assert "500.00" in first.split("**依据**")[0] and "36.00" not in first, first


def test_every_part_asked_of_a_table_split_over_two_excerpts_is_every_row_of_both():
    # the total's excerpt borrowed the header of the one holding the parts: 各分部 asks the
    # parts' rows, wherever the answer started
    total = excerpt(GROUP, "合计 | 113,005.21 | 7,909.02 | 961,133.01\n\n## 四、投资收益\n\n")
    first = answer("青岑保险各分部营业收入分别是多少？", [total, SEGMENTS])[0]
    head = first.split("**依据**")[0]
    assert "82,410.55" in head and "31,206.74" in head, first


HOLDERS = excerpt(
    "汀澜银行股份有限公司 2026 年半年度报告摘要",
    "## 四、股东情况\n\n前十名股东持股情况\n\n"
    "股东名称 | 股东性质 | 持股比例(%) | 持股总数\n\n"
    "汀澜市财政局 | 国家 | 11.36 | 668,400,000\n\n"
    "汀澜港务集团有限公司 | 国有法人 | 8.02 | 471,900,000\n\n",
)


def test_one_of_several_parts_never_answers_for_the_whole_though_no_total_is_printed():
    # 持股比例 asked of the bank names no holder: the first holder's row is one part of it
    assert not_found(answer("汀澜银行持股比例是多少？", [HOLDERS]))
    # a holder named, or ranked, is its own row
    first = answer("汀澜港务集团持股比例多少？", [HOLDERS])[0]
    assert "8.02" in first.split("**依据**")[0], first
    first = answer("汀澜银行第一大股东持股比例多少？", [HOLDERS])[0]
    assert "11.36" in first.split("**依据**")[0], first


COST = excerpt(
    "汀蓝软件股份有限公司 2027 年限制性股票激励计划（草案）摘要",
    "## 八、会计处理\n\n经测算，首次授予的 420.00 万股限制性股票需摊销的总费用约为 7,215.60 "
    "万元，在限售期内按解除限售比例分期确认。",
)


def test_a_share_asked_is_not_answered_by_a_sentence_of_amounts_naming_it():
    # 解除限售比例 is a share: the cost's 7,215.60 万元 is no share, however the sentence
    # names the ratio it is spread by
    assert not_found(answer("汀蓝软件解除限售比例是多少？", [COST]))
    # a share's name labelling its line names the figure after it
    first = answer("汀蓝软件每股分配比例是多少？", [PER_SHARE])[0]
    assert "0.25 元" in first, first
