"""Tables as an analyst asks of them (docs/extractive-provider.md, "Tables"): a balance at a
period's end (6月末, 三季度末), a capital table's two bases asked as 母公司口径 / 合并口径, a
fund's share classes (A类, C份额) as columns, a performance table's period rows, a fund's
facts table — each rule on a small document of its own, driven without a database
(tests/answers/reader.py)."""

from knowledge.periods import periods_in
from tests.answers.reader import answer, excerpt, not_found

BANK = "松岭银行股份有限公司 2026 年半年度报告摘要"
QUALITY = excerpt(
    BANK,
    "（二）资产质量\n单位：人民币百万元、%\n\n"
    "项目 | 本期末 | 上年末 | 比上年末增减\n\n"
    "不良贷款余额 | 2,716.40 | 2,588.02 | 增加 128.38\n\n"
    "不良贷款率 | 1.12 | 1.15 | 下降 0.03 个百分点",
)
CAPITAL = excerpt(
    BANK,
    "（三）资本充足率\n单位：人民币百万元、%\n\n"
    "项目 | 本期末 | 本期末 | 上年末 | 上年末\n\n"
    " | 并表 | 非并表 | 并表 | 非并表\n\n"
    "核心一级资本充足率 | 9.87 | 9.51 | 9.93 | 9.66\n\n"
    "一级资本充足率 | 11.02 | 10.74 | 11.20 | 10.95",
)


# -- a balance at a period's end ---------------------------------------------------------


def test_a_months_end_is_the_balance_date_of_the_report_period_ending_then():
    assert periods_in("6月末") == {"H1"}
    assert periods_in("九月底") == {"Q3"}
    assert periods_in("2026年12月末") == {"2026", "FY"}
    assert periods_in("三季度末") == {"Q3"} and periods_in("Q3末") == {"Q3"}
    assert periods_in("5月末") == frozenset()  # the end of no report period


def test_a_balance_asked_at_a_months_end_is_the_half_year_reports_period_end():
    blocks = answer("松岭银行6月末不良贷款余额多少？", [QUALITY])
    assert "2,716.40" in blocks[0] and f"[[cite:{QUALITY['id']}]]" in blocks[0]
    # 3月末 is a first quarter's: a half-year report does not state it
    assert not_found(answer("松岭银行3月末不良贷款余额多少？", [QUALITY]))


# -- a capital table's two bases ---------------------------------------------------------


def test_the_parent_banks_basis_is_the_non_consolidated_column():
    blocks = answer("松岭银行6月末母公司口径的核心一级资本充足率是多少？", [CAPITAL])
    assert blocks[0].startswith("**回答**（松岭银行）：核心一级资本充足率（本期末非并表）：9.51")
    assert f"[[cite:{CAPITAL['id']}]]" in blocks[0]
    blocks = answer("松岭银行合并口径的一级资本充足率是多少？", [CAPITAL])
    assert blocks[0].startswith("**回答**（松岭银行）：一级资本充足率（本期末并表）：11.02")
