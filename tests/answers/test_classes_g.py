"""A fund's share classes and the cell asked: a class asked by its letter with 类 or 份额 is
answered from that class's own table, two classes asked together each from its own, an
excess over the benchmark from the column of the difference — never the benchmark's level —
and two columns asked of one row by those two cells. One test per rule, each on a document
of its own (not the sets' fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

FUND = "汀澜稳健增利混合型证券投资基金 2026 年第三季度报告"
HEADER = (
    "阶段 | 份额净值增长率① | 份额净值增长率标准差② | 业绩比较基准收益率③ | "
    "业绩比较基准收益率标准差④ | ①－③ | ②－④\n\n"
)
STAGES = excerpt(
    FUND,
    "3.2 基金净值表现\n\n"
    "汀澜稳健增利混合 A\n\n"
    + HEADER
    + "过去三个月 | 4.36% | 0.52% | 2.81% | 0.44% | 1.55% | 0.08%\n\n"
    "过去一年 | 8.74% | 0.61% | 5.02% | 0.49% | 3.72% | 0.12%\n\n"
    "汀澜稳健增利混合 C\n\n"
    + HEADER
    + "过去三个月 | 4.21% | 0.52% | 2.81% | 0.44% | 1.40% | 0.08%\n\n"
    "过去一年 | 8.15% | 0.61% | 5.02% | 0.49% | 3.13% | 0.12%",
)


# -- a share class asked by its letter with 类 or 份额 ---------------------------------------


def test_a_class_asked_by_its_letter_and_lei_is_answered_from_its_own_table():
    # C类 (written C份额 where the report writes 份额) asks the table under 汀澜稳健增利混合 C,
    # as 汀澜稳健增利 C does: the A table's row of the same stage is not quoted
    for question in ("汀澜稳健增利C类过去一年净值增长率", "汀澜稳健增利C份额过去一年净值增长率"):
        first = answer(question, [STAGES])[0]
        assert "过去一年（份额净值增长率①）：8.15%" in first, first
        assert "8.74" not in first, first
        assert f"[[cite:{STAGES['id']}]]" in first, first
    first = answer("汀澜稳健增利A类过去一年净值增长率", [STAGES])[0]
    assert "过去一年（份额净值增长率①）：8.74%" in first, first
    assert "8.15" not in first, first


# -- a margin over the benchmark -------------------------------------------------------------


def test_a_margin_over_the_benchmark_is_never_the_benchmarks_own_level():
    # 跑赢基准多少 asks the difference (①－③), not 业绩比较基准收益率③: a row whose cell
    # asked is the benchmark's level does not answer — better not found than its 2.81%
    blocks = answer("汀澜稳健增利 C 过去三个月跑赢基准多少？", [STAGES])
    first = blocks[0]
    assert "（业绩比较基准收益率③）" not in first, first
    assert not_found(blocks) or "1.40%" in first.split("表格：")[0], first
    # the benchmark's level asked as such is still its column
    first = answer("汀澜稳健增利 C 过去三个月业绩比较基准收益率是多少？", [STAGES])[0]
    assert "过去三个月（业绩比较基准收益率③）：2.81%" in first, first


# -- two columns asked of one row --------------------------------------------------------------

BALANCES = excerpt(
    "汀州银行股份有限公司 2026 年半年度报告摘要",
    "（一）主要会计数据\n单位：人民币百万元\n\n"
    "项目 | 本期末 | 上年末 | 本期末比上年末增减(%)\n\n"
    "资产总额 | 912,480.33 | 861,207.54 | 5.95\n\n"
    "吸收存款总额 | 602,114.80 | 571,036.27 | 5.44",
)


def test_two_columns_asked_of_one_row_are_each_named_not_a_third_writing_both():
    # 本期末 and 上年末 are each a header cell whole: both cells are named, not the change
    # column whose header writes the two words (本期末比上年末增减(%))
    first = answer("汀州银行吸收存款总额本期末和上年末各多少（百万元）？", [BALANCES])[0]
    assert first.startswith(
        "**回答**（汀州银行）：吸收存款总额（本期末）：602,114.80\n吸收存款总额（上年末）：571,036.27\n"
    ), first
    assert "（本期末比上年末增减(%)）" not in first, first
    assert f"[[cite:{BALANCES['id']}]]" in first, first
    # one column asked is named alone; the change asked is still the change column
    first = answer("汀州银行吸收存款总额上年末是多少？", [BALANCES])[0]
    assert "吸收存款总额（上年末）：571,036.27" in first and "（本期末）" not in first, first
    first = answer("汀州银行吸收存款总额比上年末增长多少？", [BALANCES])[0]
    assert "吸收存款总额（本期末比上年末增减(%)）：5.44" in first, first


# -- two share classes asked together --------------------------------------------------------


def test_two_classes_asked_together_are_each_answered_from_their_own_table():
    # A 和 C (or A类和C类) before a shared stage and column: each class asks the rest of the
    # question of its own table, each row cited — no table states both letters
    for question in (
        "汀澜稳健增利 A 和 C 过去一年的净值增长率分别是多少？",
        "汀澜稳健增利A类和C类过去一年的净值增长率分别是多少？",
    ):
        first = answer(question, [STAGES])[0]
        assert "- A（汀澜稳健增利混合基金）：过去一年（份额净值增长率①）：8.74%" in first, first
        assert "- C（汀澜稳健增利混合基金）：过去一年（份额净值增长率①）：8.15%" in first, first
        assert first.count(f"[[cite:{STAGES['id']}]]") == 2, first
        assert "4.36" not in first and "4.21" not in first, first  # no other stage's row


def test_classes_asked_together_that_one_sentence_states_are_answered_by_it():
    # one unit stating both classes answers them together, as before
    prose = excerpt(
        FUND,
        "4.2 报告期内基金的业绩表现\n截至本报告期末，汀澜稳健增利混合 A 的基金份额净值为 1.1874 元；"
        "汀澜稳健增利混合 C 的基金份额净值为 1.1702 元。",
    )
    first = answer("汀澜稳健增利 A 类和 C 类期末份额净值各是多少？", [prose])[0]
    assert first.startswith("**回答**（汀澜稳健增利混合基金）：截至本报告期末"), first
    assert "1.1874" in first and "1.1702" in first, first
