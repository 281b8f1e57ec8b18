"""Prose an analyst asks of in the words of the trade: a bank's spread that narrows, a
board's new term, a fund that adds to sectors, the firm that reviewed a report, a broker's
note asked by its author's name (岚峰给…的目标价, 岚峰证券这篇综述是哪位分析师写的). One test
per rule, each on a document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

BANK = excerpt(
    "汀州银行股份有限公司 2027 年半年度报告摘要",
    "三、经营情况讨论与分析\n"
    "报告期内，本行净利差为 1.62%，同比下降 0.09 个百分点；净息差为 1.80%，同比下降 0.11"
    " 个百分点。本行 2027 年半年度财务报告未经审计，安永华明会计师事务所对其进行了审阅。",
)


def test_a_spread_that_narrows_is_printed_as_a_fall():
    # (knowledge/vocabulary.py: 收窄 → 下降)
    first = answer("汀州银行上半年的净利差是多少，同比收窄了多少？", [BANK])[0]
    assert "1.62" in first and "0.09" in first, first
    assert "[[cite:" in first, first
    widened = excerpt(
        "汀州银行股份有限公司 2027 年半年度报告摘要",
        "三、经营情况讨论与分析\n报告期内，本行净利差为 1.62%，同比上升 0.05 个百分点。",
    )
    assert not_found(answer("汀州银行上半年净利差同比收窄了多少？", [widened]))


BOARD = excerpt(
    "bailu-board-2027-03",
    "证券代码：301288          证券简称：白鹭科技          公告编号：2027-015\n\n"
    "白鹭科技股份有限公司\n第三届董事会第一次会议决议公告\n\n"
    "（一）审议通过《关于聘任公司总经理的议案》\n\n"
    "经董事长提名，同意聘任程望舒先生为公司总经理，任期与第三届董事会任期一致。\n\n"
    "表决结果：同意 7 票，反对 0 票，弃权 0 票。",
)


def test_a_verb_of_appointment_after_the_post_asks_the_post():
    # 总经理聘的是谁: 聘 links the post to the person (grammar.PREDICATE_AFTER)
    first = answer("白鹭科技的总经理聘的是谁？", [BOARD])[0]
    assert "程望舒" in first and "[[cite:" in first, first
    assert not_found(answer("白鹭科技的财务总监聘的是谁？", [BOARD]))


def test_the_new_term_points_back_to_the_board_the_document_elects():
    # 新一届 is the term the resolution is about, like 这期 (grammar.QUESTION_WORDS)
    first = answer("白鹭科技新一届董事会聘任的总经理是谁？", [BOARD])[0]
    assert "程望舒" in first and "[[cite:" in first, first


def test_a_fund_adding_to_sectors_is_printed_as_adding_their_allocation():
    # (knowledge/vocabulary.py: 增配 → 增加, 增持; 减配 → 减少, 减持)
    fund = excerpt(
        "松涛成长优选混合型证券投资基金 2027 年第一季度报告",
        "## §4 管理人报告\n\n4.1 报告期内基金的投资策略和运作分析\n\n"
        "一季度市场震荡。本基金增加了通信、有色金属和军工板块的配置，权益仓位保持稳定。",
    )
    first = answer("松涛成长优选一季度增配了哪些板块？", [fund])[0]
    for sector in ("通信", "有色金属", "军工"):
        assert sector in first, first
    assert "[[cite:" in first, first
    assert not_found(answer("松涛成长优选一季度减配了哪些板块？", [fund]))


def test_so_before_a_verb_is_the_particle_of_what_was_done():
    # 是哪家所审阅的: 所 before 审阅 is grammar (grammar.LEAD_FUNCTION), 审阅 is asked
    first = answer("汀州银行的半年报审计了吗？是哪家所审阅的", [BANK])[0]
    assert "安永华明" in first and "[[cite:" in first, first


FUND = excerpt(
    "松涛成长优选混合型证券投资基金 2027 年第一季度报告",
    "## §4 管理人报告\n\n4.1 报告期内基金的投资策略和运作分析\n\n"
    "一季度市场先抑后扬，中证 500 指数上涨 5.2%。本基金维持中性仓位。",
)


def test_that_report_points_back_like_this_one():
    # 那份 / 这篇 point back to the document asked of, like 这份 (grammar.QUESTION_WORDS)
    first = answer("松涛成长优选那份一季报里说一季度中证500上涨了多少？", [FUND])[0]
    assert "5.2" in first and "[[cite:" in first, first


def test_a_rise_said_in_one_word_is_printed_as_a_rise():
    # (knowledge/vocabulary.py: 涨 → 上涨, 增长; 跌 → 下跌, 下降)
    first = answer("松涛成长优选一季报里一季度中证500涨了多少？", [FUND])[0]
    assert "5.2" in first and "[[cite:" in first, first
    assert not_found(answer("松涛成长优选一季报里一季度中证500跌了多少？", [FUND]))
