"""Comparisons that must quote the thing asked: each compared entity's line states that
entity's own figure of the measure asked, or says it is not found and no difference is
drawn; a name the retrieved documents do not write is not their entity. One test per
rule, each on a document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt

QUESTION = "汐川银行和溪口银行拨备覆盖率谁更高"

# -- a note's sections headed by a bank's name alone, each with its own small table ------------

SECTIONS = excerpt(
    "城商行 2027 年中报点评",
    "## 汐川银行\n\n指标 | 数值\n\n拨备覆盖率 | 301.25%\n\n净息差 | 1.71%\n\n"
    "## 溪口银行\n\n指标 | 数值\n\n净息差 | 1.52%",
)
BOTH_SECTIONS = excerpt(
    "城商行 2027 年中报点评",
    "## 汐川银行\n\n指标 | 数值\n\n拨备覆盖率 | 301.25%\n\n净息差 | 1.71%\n\n"
    "## 溪口银行\n\n指标 | 数值\n\n拨备覆盖率 | 244.10%\n\n净息差 | 1.52%",
)


def test_a_compared_entitys_line_states_the_measure_asked():
    # ## 溪口银行 heads a section as ## 溪口银行：… does, so 拨备覆盖率 glued to it is asked of
    # both banks; 溪口银行's table has no 拨备覆盖率 row, so its line is "not found" — not
    # its 净息差 | 1.52% row — and no difference is drawn (reading.section_heading,
    # extractive._states_own)
    text = "\n".join(answer(QUESTION, [SECTIONS]))
    assert "1.52%" not in text and "相差" not in text, text
    assert "未找到溪口银行的「拨备覆盖率」" in text, text
    assert "301.25%" in text, text


def test_each_sections_row_of_the_measure_still_answers():
    # control: both sections state 拨备覆盖率, each on its own line
    first = answer(QUESTION, [BOTH_SECTIONS])[0]
    assert "301.25%" in first and "244.10%" in first, first
    assert "1.52%" not in first and "1.71%" not in first, first


# -- one sentence naming both banks, stating only one's figure ---------------------------------

XICHUAN = excerpt("汐川银行 2027 年半年度报告摘要", "拨备覆盖率 | 301.25%\n\n净息差 | 1.71%")
XIKOU = excerpt(
    "溪口银行 2027 年半年度报告摘要",
    "汐川银行和溪口银行均披露中报，汐川银行拨备覆盖率为 301.25%。",
)
XIKOU_OWN = excerpt(
    "溪口银行 2027 年半年度报告摘要",
    "汐川银行和溪口银行均披露中报，溪口银行拨备覆盖率为 244.10%。",
)


def test_a_sentence_naming_both_answers_only_the_entity_whose_figure_it_states():
    # 汐川银行和溪口银行均披露中报，汐川银行拨备覆盖率为 301.25%: the figure follows 汐川银行's
    # name, so it is 汐川银行's — 溪口银行's line does not quote it, and no difference is
    # drawn (comparison.states_own_figure)
    first = answer(QUESTION, [XICHUAN, XIKOU])[0]
    below = first.split("- 溪口银行", 1)[1]
    assert "301.25%" not in below and f"[[cite:{XIKOU['id']}]]" not in below, first
    assert "检索到的摘录没有写明" in below, first
    assert "相差" not in first, first
    assert "301.25%" in first.split("- 溪口银行", 1)[0], first


def test_a_sentence_stating_the_entitys_own_figure_still_answers_its_line():
    # control: the figure after 溪口银行's own name is its line's
    first = answer(QUESTION, [XICHUAN, XIKOU_OWN])[0]
    below = first.split("- 溪口银行", 1)[1]
    assert "244.10%" in below and f"[[cite:{XIKOU_OWN['id']}]]" in below, first


# -- a name written with another first character ------------------------------------------------

YANLAN = excerpt(
    "岩岚冷链物流股份有限公司 2027 年半年度报告",
    "报告期末，公司资产负债率为 46.8%，较上年末下降 1.2 个百分点。",
)
HAILAN = excerpt("海岚冷链股份有限公司 2027 年半年度报告", "报告期末，公司资产负债率为 52.1%。")


def test_a_name_the_documents_do_not_write_is_not_their_entity():
    # 海岚冷链 writes 岚冷链 after 海, 岩岚冷链物流 after 岩: another company's name, though
    # no document of it is retrieved — not found, nothing cited (selection.named_otherwise)
    text = "\n".join(answer("海岚冷链资产负债率多少", [YANLAN]))
    assert "46.8" not in text, text
    assert "[[cite:" not in text, text


def test_the_documents_own_name_still_answers():
    # controls: the name the document writes, and the other company's own document
    first = answer("岩岚冷链资产负债率多少", [YANLAN])[0]
    assert "46.8%" in first and f"[[cite:{YANLAN['id']}]]" in first, first
    first = answer("海岚冷链资产负债率多少", [YANLAN, HAILAN])[0]
    assert "52.1%" in first and "46.8" not in first, first


NOTE = excerpt(
    "城商行 2027 年中报点评",
    "## 汐川银行：资产质量稳健\n\n汐川银行拨备覆盖率为 301.25%。\n\n"
    "## 溪口银行：息差承压\n\n汐川银行和溪口银行均披露中报，汐川银行拨备覆盖率为 301.25%。",
)


def test_a_names_line_in_a_note_is_not_a_sentence_stating_anothers_figure():
    # the same of names asked apart in one note: 溪口银行's section writes 汐川银行's figure,
    # after 汐川银行's name — not 溪口银行's line (extractive._parts, states_own_figure)
    first = answer(QUESTION, [NOTE])[0]
    below = first.split("- 溪口银行", 1)[1]
    assert "301.25%" not in below and "[[cite:" not in below, first
    assert "未找到溪口银行的「拨备覆盖率」" in below, first
