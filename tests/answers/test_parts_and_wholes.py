"""A figure's part is not its whole: a clause stating a part as a share of the whole
(其中首次授予 520.00 万股，占本激励计划拟授予总量的 86.67%) does not answer for the whole —
the score reads it as the floor does (docs/extractive-provider.md)."""

from tests.answers.reader import answer, excerpt, not_found

TITLE = "青梧科技股份有限公司 2027 年限制性股票激励计划（草案）摘要"
GRANT = (
    "## 二、拟授予的限制性股票数量\n\n"
    "本激励计划拟向激励对象授予限制性股票 300.00 万股，约占本激励计划草案公告时公司股本总额"
    " 20,000.00 万股的 1.50%。其中首次授予 240.00 万股，占本激励计划拟授予总量的 80.00%；"
    "预留 60.00 万股，占本激励计划拟授予总量的 20.00%。"
)


def _first(question: str) -> str:
    return answer(question, [excerpt(TITLE, GRANT)])[0]


def test_the_whole_is_answered_by_the_figure_of_the_whole_not_by_a_share_of_it():
    for question in ("青梧科技激励计划授予多少万股？", "青梧科技这次激励计划一共授予多少万股？"):
        first = _first(question)
        assert "300.00" in first
        assert "240.00" not in first and "60.00" not in first


def test_a_part_the_question_names_is_still_answered_by_its_clause():
    assert "240.00" in _first("青梧科技首次授予多少万股？")
    assert "60.00" in _first("青梧科技预留多少万股？")
    assert "80.00%" in _first("青梧科技首次授予占授予总量的比例是多少？")


DIVIDEND_TITLE = "青梧科技股份有限公司 2026 年年度权益分派实施公告"
DIVIDEND = (
    "二、分配方案\n3. 分配方案：本次利润分配以方案实施前的公司总股本 400,000,000 股为基数，"
    "每股派发现金红利 0.20 元（含税），共计派发现金红利 80,000,000.00 元。"
)


def test_a_total_asked_is_stated_by_the_words_a_total_is_printed_with():
    first = answer("青梧科技本次派息总额是多少？", [excerpt(DIVIDEND_TITLE, DIVIDEND)])[0]
    assert "80,000,000.00" in first
    # the total of another thing is still not stated
    assert not_found(answer("青梧科技资产总额多少？", [excerpt(DIVIDEND_TITLE, DIVIDEND)]))
