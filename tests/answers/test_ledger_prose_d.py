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


# A broker's note whose title names a sector, not the broker (named in its byline only).
NOTE_TITLE = "券商行业 2027 年中报综述：经纪回暖，自营分化"
BYLINE = excerpt(
    NOTE_TITLE,
    "# 券商行业 2027 年中报综述：经纪回暖，自营分化\n\n海湾证券研究所 | 行业研究 | 2027 年 9 月 2 日"
    "\n\n## 核心观点\n\n上半年券商经纪收入回升。",
)
SECTIONS = excerpt(
    NOTE_TITLE,
    "## 北辰证券：自营弹性大\n\n上半年营收同比增长 8.10%；维持“买入”评级，目标价 15.30 元。\n\n"
    "## 南枫证券：财富管理见效\n\n上半年营收同比增长 3.20%；首次覆盖给予“中性”评级，目标价 11.60 元。",
)
RISKS = excerpt(
    NOTE_TITLE,
    "## 风险提示\n\n市场成交额下滑；自营投资波动加大；监管政策变化。\n\n"
    "分析师：林听澜（执业证书编号：S1280524010003）",
)


def test_who_gives_a_target_price_is_the_note_s_author():
    # 海湾给南枫证券: the giver is the note's author, named by its byline (a doer), and
    # 南枫证券 is asked of the sections (reading._author_apart)
    first = answer("海湾给南枫证券的目标价是多少？", [BYLINE, SECTIONS, RISKS])[0]
    assert "11.60" in first and "15.30" not in first, first
    assert f"[[cite:{SECTIONS['id']}]]" in first, first
    assert not_found(answer("海湾给南枫证券的市净率是多少？", [BYLINE, SECTIONS, RISKS]))


def test_a_name_before_a_word_for_a_document_is_its_author():
    # 海湾券商行业报告: whose report; 都列 lists (grammar.PREDICATE_AFTER)
    first = answer("海湾券商行业报告的风险提示都列了哪些？", [BYLINE, SECTIONS, RISKS])[0]
    for risk in ("市场成交额下滑", "自营投资波动加大", "监管政策变化"):
        assert risk in first, first
    assert f"[[cite:{RISKS['id']}]]" in first, first


def test_a_name_before_this_note_is_its_author_and_who_wrote_it_is_its_analyst():
    # 海湾证券这篇…综述: the author (a doer); 哪位分析师写的 asks the 分析师
    first = answer("海湾证券这篇券商行业中报综述是哪位分析师写的？", [BYLINE, SECTIONS, RISKS])[0]
    assert "林听澜" in first and f"[[cite:{RISKS['id']}]]" in first, first


VALUATION = excerpt(
    NOTE_TITLE,
    "## 北辰证券：自营弹性大\n\n上半年营收同比增长 8.10%。我们预测公司 2027—2029 年归母净利润增速为"
    " 9.5%/8.2%/7.6%，维持“买入”评级，目标价 15.30 元，对应 2027 年 1.45 倍 PB。\n\n"
    "## 南枫证券：财富管理见效\n\n上半年营收同比增长 3.20%；首次覆盖给予“中性”评级，目标价 11.60 元。",
)
NORTH_REPORT = excerpt(
    "北辰证券股份有限公司 2027 年半年度报告摘要",
    "三、经营情况\n报告期内，本公司实现营业收入 52.30 亿元，同比增长 8.10%。",
)


def test_a_note_s_section_headed_by_a_company_is_about_that_company():
    # 北辰证券 has a report of its own; the note's section ## 北辰证券：… is about it too
    # (selection.section_about), and 海湾 is named by the note's byline, another excerpt
    excerpts = [NORTH_REPORT, BYLINE, VALUATION]
    first = answer("海湾给北辰证券15.3元的目标价，对应2027年多少倍PB？", excerpts)[0]
    assert "1.45" in first and f"[[cite:{VALUATION['id']}]]" in first, first
    # the other section is not about it
    assert not_found(answer("北辰证券首次覆盖给予的评级是什么？", excerpts))


def test_what_is_forecast_is_asked_apart_from_the_verb_of_forecasting():
    # 海湾预测|南枫证券…: 预测 and another bank's section do not state 南枫证券 together
    excerpts = [BYLINE, VALUATION]
    assert not_found(answer("海湾预测南枫证券2027—2029年归母净利润增速分别是多少？", excerpts))
    first = answer("海湾预测北辰证券2027—2029年归母净利润增速分别是多少？", excerpts)[0]
    assert "9.5%" in first and f"[[cite:{VALUATION['id']}]]" in first, first


def test_a_thing_its_year_and_its_head_are_one_thing_not_two_asked_apart():
    # 创新药2026年收入 (a year between the modifier and its head: selection._one_thing) is
    # not 创新药 and 收入 asked side by side, each answered by a sentence of its own
    report = excerpt(
        "南岭医药股份有限公司 2026 年年度报告摘要",
        "三、经营情况\n2026 年，公司实现营业收入 75.20 亿元，同比增长 12.40%。创新药管线新增"
        " 3 个临床批件，在研项目 2026 年达到 18 项。",
    )
    assert not_found(answer("南岭医药的创新药2026年收入是多少？", [report]))
    first = answer("南岭医药2026年营业收入是多少？", [report])[0]
    assert "75.20" in first and f"[[cite:{report['id']}]]" in first, first
