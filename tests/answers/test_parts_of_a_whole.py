"""A part asked of a whole: the share of a row's own figure, and the part a follow-up asks
of the whole asked before (docs/extractive-provider.md, tables). Each document is its own;
tables are written as ingestion writes them."""

from agents.providers.reading import read_question
from tests.answers.reader import answer, excerpt, not_found

PLAN = "云枫科技股份有限公司 2028 年员工持股计划（草案）摘要"
HOLDERS = (
    "## 三、持有人范围及份额分配\n\n"
    "持有人 | 职务 | 认购份额（万份） | 占本计划总份额的比例\n"
    "韩立 | 董事长 | 300.00 | 10.00%\n"
    "林岚 | 财务总监 | 150.00 | 5.00%\n"
    "其他员工（120 人） | — | 2,550.00 | 85.00%\n"
    "合计 | — | 3,000.00 | 100.00%"
)


def test_the_share_of_a_rows_own_figure_is_its_share_column():
    # 林岚认购份额 glues the row's label to the words of another column (认购份额（万份）):
    # the figure whose share 占本计划总份额的比例 is
    first = answer("林岚认购份额占云枫科技计划总份额的比例是多少？", [excerpt(PLAN, HOLDERS)])[0]
    assert "5.00%" in first and "林岚" in first
    assert "10.00%" not in first


def test_a_share_of_a_row_the_table_lacks_is_not_found():
    blocks = answer("周舟认购份额占云枫科技计划总份额的比例是多少？", [excerpt(PLAN, HOLDERS)])
    assert not_found(blocks)


REPORT = "云枫科技股份有限公司 2027 年年度报告摘要"
INDICATORS = (
    "二、主要会计数据\n"
    "单位：万元\n"
    "项目 | 本年 | 上年 | 变动（%）\n"
    "营业收入 | 96,410.55 | 88,203.17 | 9.30\n"
    "归属于上市公司股东的净利润 | 8,650.20 | 7,512.64 | 15.14"
)
SEGMENTS = (
    "五、分部信息\n"
    "单位：万元\n"
    "分部 | 分部营业收入 | 分部净利润 | 分部资产总额\n"
    "家电 | 61,208.40 | 5,120.30 | 180,220.15\n"
    "照明 | 35,202.15 | 3,529.90 | 72,418.09\n"
    "合计 | 96,410.55 | 8,650.20 | 252,638.24"
)


def test_a_follow_up_asking_a_part_reads_the_whole_asked_before():
    # 其中 leads a follow-up asking a part of the whole asked before (归母净利润, read past
    # 同比增长多少？, which asked an attribute of it); 贡献 links the part to it
    history = [
        {"question": "云枫科技2027年归母净利润是多少？", "answer": ""},
        {"question": "同比增长多少？", "answer": ""},
    ]
    sources = [excerpt(REPORT, INDICATORS), excerpt(REPORT, SEGMENTS)]
    first = answer("其中家电分部贡献了多少？", sources, history=history)[0]
    answer_line = first.splitlines()[0]
    assert "家电" in answer_line and "5,120.30" in answer_line, first
    assert "61,208.40" not in answer_line and "3,529.90" not in first


def test_the_question_reads_the_scale_and_who_or_which_once():
    question = read_question("云枫科技认购份额最多的是谁？营收多少亿？", HOLDERS)
    assert question.who_or_which and question.scale == "亿"
    question = read_question("云枫科技营收多少万元？", HOLDERS)
    assert not question.who_or_which and question.scale == "万"
