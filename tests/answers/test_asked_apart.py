"""Names a question coordinates before a shared head (A和B的目标价) ask the head of each,
and a coverb of giving after a name (X给Y) joins two participants
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


def test_a_name_before_a_coverb_of_giving_is_a_participant_not_a_modifier():
    # 海湾证券给南枫证券 asks of 南枫证券 too: the industry's rating names neither
    first = answer("海湾证券给南枫证券什么评级？", _note())[0]
    assert "行业评级" not in first, first
    assert "中性" in first or first.startswith("未在可用的知识版本中找到"), first


def _cut(content: str, start: int) -> dict:
    # an excerpt of the note where the chunker cut it: its span in the document
    result = excerpt(NOTE, content)
    end = start + len(content)
    result["sourceRef"] = {
        "type": "document",
        "id": "note",
        "locator": {"start": start, "end": end},
    }
    return result


def test_a_section_cut_across_two_chunks_is_read_under_the_heading_the_first_ends_with():
    head = "海湾证券研究所 | 行业研究\n\n## 北辰证券：自营弹性大"
    rest = "上半年营收同比增长 8.10%。净资本 1,236.50 亿元，较年初增长 4.20%。"
    excerpts = [_cut(head, 0), _cut(rest, len(head) + 2)]
    first = answer("北辰证券的净资本是多少？", excerpts)[0]
    assert "1,236.50" in first and f"[[cite:{excerpts[1]['id']}]]" in first, first
    # not next to it (another chunk between): the rows name nothing
    apart = [_cut(head, 0), _cut(rest, len(head) + 400)]
    assert "1,236.50" not in answer("北辰证券的净资本是多少？", apart)[0]


def test_a_name_asked_apart_that_has_its_own_report_is_answered_from_the_note_naming_it():
    own = excerpt("北辰证券股份有限公司 2026 年半年度报告摘要", "本公司上半年营业收入 52.30 亿元。")
    excerpts = [own, *_note()]
    first = answer("北辰证券和南枫证券的目标价分别是多少？", excerpts)[0]
    lines = first.splitlines()
    north = next(line for line in lines if line.startswith("- 北辰证券"))
    south = next(line for line in lines if line.startswith("- 南枫证券"))
    assert "15.30" in north and f"[[cite:{excerpts[2]['id']}]]" in north, first
    assert "11.60" in south and f"[[cite:{excerpts[3]['id']}]]" in south, first


def test_a_name_asked_apart_whose_part_is_stated_nowhere_says_so_on_its_own_line():
    # the note rates 南枫证券 but gives it no target price
    south = "## 南枫证券：财富管理见效\n\n上半年营收同比增长 3.20%；首次覆盖给予“中性”评级。"
    excerpts = [excerpt(NOTE, RATINGS), excerpt(NOTE, NORTH), excerpt(NOTE, south)]
    first = answer("北辰证券和南枫证券的目标价分别是多少？", excerpts)[0]
    lines = first.splitlines()
    north = next(line for line in lines if line.startswith("- 北辰证券"))
    missing = next(line for line in lines if line.startswith("- 南枫证券"))
    assert "15.30" in north and f"[[cite:{excerpts[1]['id']}]]" in north, first
    assert "未找到" in missing and "目标价" in missing and "[[cite:" not in missing, first
