"""Table rows named as a stranger names them: by the ordinal their label is written with,
glued to a column's words, or by the caption that leads the table in
(docs/extractive-provider.md, tables). Tables are written as ingestion writes them."""

from agents.providers.reading import read_question
from tests.answers.reader import answer, excerpt, not_found

TITLE = "云枫科技股份有限公司 2028 年员工持股计划（草案）摘要"
VESTING = (
    "## 五、锁定期安排\n\n"
    "归属安排 | 归属时间 | 归属比例\n"
    "第一个归属期 | 自首次授予之日起 12 个月后至 24 个月内 | 35%\n"
    "第二个归属期 | 自首次授予之日起 24 个月后至 36 个月内 | 35%\n"
    "第三个归属期 | 自首次授予之日起 36 个月后至 48 个月内 | 30%"
)
TARGETS = (
    "## 六、公司层面业绩考核要求\n\n"
    "以 2027 年营业收入为基数，各年度业绩考核目标如下：\n\n"
    "归属期 | 考核年度 | 营业收入增长率 | 毛利率\n"
    "第一个归属期 | 2028 年 | 不低于 18% | 不低于 31%\n"
    "第二个归属期 | 2029 年 | 不低于 39% | 不低于 32%\n"
    "第三个归属期 | 2030 年 | 不低于 64% | 不低于 33%"
)


def test_an_ordinal_written_in_a_row_label_names_that_row():
    # 第二个 is part of the label 第二个归属期, not an item picked from a list of 归属期
    question = read_question("云枫科技第二个归属期的归属比例是多少？", VESTING)
    assert "第二个归属期" in question.terms and not question.ordinal
    first = answer("云枫科技第二个归属期的归属比例是多少？", [excerpt(TITLE, VESTING)])[0]
    assert "第二个归属期" in first and "35%" in first


def test_an_ordinal_no_excerpt_writes_still_picks_an_item():
    question = read_question("云枫科技第二个风险是什么？", VESTING)
    assert question.ordinal == 2 and "第二个风险" not in question.terms


def test_a_caption_leading_a_table_in_names_what_its_figures_are():
    # the figures under 毛利率 are 业绩考核目标: 毛利率目标 asks that column of the row named
    first = answer("云枫科技第三个归属期的毛利率目标是多少？", [excerpt(TITLE, TARGETS)])[0]
    assert "33%" in first
    assert "64%" not in first.split("表格")[0]


def test_a_target_is_not_read_from_a_table_no_caption_calls_targets():
    table = TARGETS.replace("以 2027 年营业收入为基数，各年度业绩考核目标如下：\n\n", "")
    assert not_found(answer("云枫科技第三个归属期的毛利率目标是多少？", [excerpt(TITLE, table)]))


SEGMENTS = (
    "四、分部经营情况\n"
    "分部 | 营业收入 | 分部净利润\n"
    "家电 | 120.50 | 9.80\n"
    "照明 | 45.20 | 3.10\n"
    "新能源 | 30.10 | 1.20\n"
    "抵销及其他 | -5.30 | -0.60\n"
    "合计 | 190.50 | 13.50"
)


def test_which_rows_lists_the_members_not_the_row_reconciling_them_to_the_total():
    first = answer("云枫科技有哪几个分部？", [excerpt(TITLE, SEGMENTS)])[0]
    assert all(name in first for name in ("家电", "照明", "新能源"))
    assert "抵销及其他" not in first and "合计" not in first


def test_a_segment_asked_as_a_business_segment_is_the_tables_segment():
    # 业务分部 is the vocabulary's 分部 (knowledge/vocabulary.py)
    first = answer("云枫科技有哪几个业务分部？", [excerpt(TITLE, SEGMENTS)])[0]
    assert all(name in first for name in ("家电", "照明", "新能源"))


def test_the_lowest_row_is_a_member_not_the_reconciling_row():
    first = answer("云枫科技哪个分部的分部净利润最低？", [excerpt(TITLE, SEGMENTS)])[0]
    assert "新能源" in first and "1.20" in first
    assert "抵销及其他" not in first
