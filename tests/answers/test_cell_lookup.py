"""A question asking who or which one, answered by the row whose own cells state what it
asks: the row's label is the one asked for (docs/extractive-provider.md, tables)."""

from agents.providers.reading import read_question
from tests.answers.reader import answer, excerpt, not_found

TITLE = "青梧科技股份有限公司 2027 年限制性股票激励计划（草案）摘要"
GRANTS = (
    "| 姓名 | 职务 | 获授数量（万股） | 占授予总量的比例 |\n"
    "| --- | --- | --- | --- |\n"
    "| 周闻川 | 董事、总经理 | 40.00 | 6.67% |\n"
    "| 邵可宁 | 副总经理、财务总监 | 25.00 | 4.17% |\n"
    "| 梁雪 | 副总经理 | 20.00 | 3.33% |\n"
    "| 韦岸 | 董事会秘书 | 15.00 | 2.50% |\n"
    "| 合计 | — | 100.00 | 16.67% |"
)


def _first(question: str) -> str:
    return answer(question, [excerpt(TITLE, GRANTS)])[0]


def test_who_holds_a_role_is_the_row_whose_role_cell_lists_it():
    first = _first("青梧科技财务总监是谁？")
    assert "邵可宁" in first
    assert "周闻川" not in first and "韦岸" not in first


def test_a_role_through_the_vocabulary_and_one_item_of_several():
    assert "韦岸" in _first("青梧科技董秘是谁？")
    blocks = answer("青梧科技的总经理是谁？", [excerpt(TITLE, GRANTS)])
    assert "周闻川" in blocks[0]
    # 副总经理 is another role: its rows do not answer for 总经理, nor support the answer
    assert not any("梁雪" in block or "邵可宁" in block for block in blocks)


def test_a_role_no_cell_lists_is_not_found():
    assert not_found(answer("青梧科技的首席技术官是谁？", [excerpt(TITLE, GRANTS)]))


def test_a_pronoun_asks_about_whoever_the_question_before_asked_for():
    earlier = "青梧科技财务总监是谁？"
    first = answer("她获授多少万股？", [excerpt(TITLE, GRANTS)], [{"question": earlier}])[0]
    assert "25.00" in first
    assert "40.00" not in first and "15.00" not in first


def test_other_is_no_pronoun():
    # 其他 holds 他: a question naming 其他投资 is not a follow-up about someone
    question = read_question("青梧科技其他投资多少万元？", "青梧科技 其他投资")
    assert "其他投资" in question.terms
    assert not question.follow_up
