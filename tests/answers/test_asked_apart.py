"""Names a question coordinates before a shared head (A和B的目标价) ask the head of each
(docs/extractive-provider.md, "Structures understood"). On a broker's note of its own, driven without a database
(tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

# (a title that does not name the broker: the broker is named only in the text)
NOTE = "券商行业 2026 年中报点评"
RATINGS = (
    "海湾证券研究所 | 行业研究\n\n## 核心观点\n\n行业评级：看好（维持）。券商上半年经纪收入回升。"
)
NORTH = "## 北辰证券：自营弹性大\n\n上半年营收同比增长 8.10%；维持“买入”评级，目标价 15.30 元。"
SOUTH = "## 南枫证券：财富管理见效\n\n上半年营收同比增长 3.20%；首次覆盖给予“中性”评级，目标价 11.60 元。"


def _note() -> list[dict]:
    return [excerpt(NOTE, RATINGS), excerpt(NOTE, NORTH), excerpt(NOTE, SOUTH)]


def test_names_coordinated_before_a_shared_head_are_each_answered_on_their_own_line():
    excerpts = _note()
    first = answer("北辰证券和南枫证券的目标价分别是多少？", excerpts)[0]
    lines = first.splitlines()
    north = next(line for line in lines if line.startswith("- 北辰证券"))
    south = next(line for line in lines if line.startswith("- 南枫证券"))
    assert "15.30" in north and f"[[cite:{excerpts[1]['id']}]]" in north, first
    assert "11.60" in south and f"[[cite:{excerpts[2]['id']}]]" in south, first


def test_a_name_coordinated_whose_head_is_stated_nowhere_is_not_found():
    assert not_found(answer("北辰证券和南枫证券的市净率分别是多少？", _note()))
