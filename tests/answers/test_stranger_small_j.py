"""A stranger's questions over the four small fixtures (a quarter's filing, a memo, funds'
reports, a half-year's tables): the documents state the thing, the reader refused it or
quoted another figure first (a share's whole asked with its holder's name inside it, the
segments a which-question asks for, a share's change asked as a follow-up, a figure asked
in a unit it is not in, a ratio's row). One test per rule, each on a document of its own
(not the sets' fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

FUND = excerpt(
    "澄川价值精选混合型证券投资基金 2026 年第 3 季度报告",
    "§3 投资组合报告\n"
    "报告期末前三名股票投资明细：\n"
    "1. 青禾电气，占基金资产净值 7.3%；\n"
    "2. 岚山材料，占基金资产净值 5.1%；\n"
    "3. 临江重工，占基金资产净值 4.4%。",
)
HALF_YEAR = "青澜重工股份有限公司 2026 年半年度报告"


# -- a share's whole is what 占 governs, a name between them or not -------------------------


def test_a_holders_name_between_the_share_verb_and_its_whole_leaves_the_whole_a_whole():
    # 占澄川价值精选基金净值比例: the fund's 净值 is the whole (占基金资产净值 5.1%), not a
    # part the sentence must state outside its share
    first = answer("岚山材料占澄川价值精选基金净值比例是多少？", [FUND])[0]
    assert "5.1%" in first and f"[[cite:{FUND['id']}]]" in first, first
    # (a holding the report does not list is still not found)
    assert not_found(answer("松石科技占澄川价值精选基金净值比例是多少？", [FUND]))


# -- the segments a which-question asks for -------------------------------------------------


SEGMENTS = excerpt(
    HALF_YEAR,
    "二、分业务经营情况\n"
    "工程机械业务受益于海外需求放量，收入同比增长 18.2%；"
    "农业机械业务受行业周期影响，收入同比下降 6.4%。",
)


def test_a_segment_head_after_which_names_the_kind_of_the_segments_asked():
    # 哪几个业务的收入: 业务 is the kind of the rows asked, what is asked of them is 收入 —
    # not one phrase 业务收入增长
    first = answer("青澜重工哪几个业务的收入增长了？", [SEGMENTS])[0]
    assert "工程机械" in first and "18.2%" in first, first
    first = answer("青澜重工哪些业务的收入增长了？", [SEGMENTS])[0]
    assert "工程机械" in first and "18.2%" in first, first
    # (what the segments are asked of must still be stated: no 毛利率 here)
    assert not_found(answer("青澜重工哪些业务的毛利率提高了？", [SEGMENTS]))


# -- a follow-up's change of the share asked before it --------------------------------------


OVERSEAS = excerpt(
    HALF_YEAR,
    "三、经营情况讨论与分析\n"
    "报告期内，海外业务收入 12.6 亿元，占营业收入的 31.2%，较上年同期提升 4.1 个百分点。",
)


def test_a_change_asked_after_a_share_is_that_shares_change_in_points():
    history = [{"question": "青澜重工海外业务收入占营收比重是多少？", "answer": "31.2%"}]
    first = answer("较上年同期提升了多少？", [OVERSEAS], history=history)[0]
    assert "4.1 个百分点" in first and f"[[cite:{OVERSEAS['id']}]]" in first, first
    # (the income's own growth, asked after the income, is still not written)
    history = [{"question": "青澜重工海外业务收入是多少？", "answer": "12.6 亿元"}]
    assert not_found(answer("同比增长多少？", [OVERSEAS], history=history))


# -- a figure asked in a unit is one in that unit -------------------------------------------


MEMO = excerpt(
    "内部投研纪要：青禾电气调研",
    "投资建议（内部，未对外发布）\n"
    "建议澄川价值精选混合基金将青禾电气目标仓位由 7.3% 上调至不超过 10%。",
    {"key": "target_weight", "label": "目标持仓上限", "display": "10%"},
)


def test_a_figure_asked_in_shares_is_not_answered_by_a_percent_handle():
    # 持有多少股 asks a count of shares: the memo's 目标持仓上限 10% is neither its answer
    # nor a figure related to it
    assert not_found(answer("澄川价值精选基金持有青禾电气多少股？", [FUND, MEMO]))
    # (asked as a share, the holding is answered)
    first = answer("澄川价值精选基金持有青禾电气的比例是多少？", [FUND, MEMO])[0]
    assert "7.3%" in first, first


# -- a ratio asked names no row of what it is a ratio of ------------------------------------


SPENDING = excerpt(
    "青禾电气股份有限公司 2026 年第三季度报告",
    "## 一、主要财务数据\n\n"
    "项目 | 本报告期 | 本报告期比上年同期增减\n\n"
    "营业收入 | 68,900 | 9.8%\n\n"
    "研发费用 | 8,420 | 31.5%\n\n"
    "## 二、经营情况\n\n"
    "本报告期公司研发费用率为 12.2%，同比提高 0.8 个百分点。",
)


def test_a_follow_up_after_a_ratio_is_not_asked_of_the_row_the_ratio_is_of():
    # 研发费用率 names no row 研发费用: 同比提高多少？ asks the ratio's change, not the
    # expense's growth in its row
    history = [{"question": "青禾电气三季度研发费用率是多少？", "answer": "12.2%"}]
    first = answer("同比提高多少？", [SPENDING], history=history)[0]
    assert "0.8 个百分点" in first and "31.5" not in first, first
    # (the expense's row goes on after the expense asked)
    history = [{"question": "青禾电气三季度研发费用是多少？", "answer": "8,420"}]
    first = answer("同比增长多少？", [SPENDING], history=history)[0]
    assert "31.5%" in first, first
