"""A stranger's questions over filings and notes of the kind the ledger fixture holds (a
bank's interim report, a broker's sector note, a board's resolutions, a fund's quarterly
report), asked in an analyst's words. One test per rule, each on a document of its own (not
the sets' fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

# -- a forecast year ----------------------------------------------------------------------

NOTE = excerpt(
    "岩川证券 券商板块 2026 年中报综述：经纪回暖",
    "## 重点公司估值表\n\n"
    "公司 | 代码 | 评级 | 目标价（元） | 2026E EPS（元） | 2026E PE（倍）\n\n"
    "汀洲证券 | 600901 | 买入 | 18.40 | 1.12 | 14.2\n\n"
    "霞浦证券 | 600902 | 增持 | 11.60 | 0.74 | 13.5\n\n"
    "资料来源：Wind，岩川证券研究所（2026E 为岩川证券预测）",
)


def test_a_year_marked_e_is_the_forecast_asked():
    # 2026E is the note's forecast for 2026: EPS预测 is its column, not a word the table lacks
    first = answer("霞浦证券2026年EPS预测是多少？", [NOTE])[0]
    assert "0.74" in first and "1.12" not in first, first
    assert f"[[cite:{NOTE['id']}]]" in first, first
    # a forecast of a figure the table has no column of stays "not found"
    assert not_found(answer("霞浦证券2026年营收预测是多少？", [NOTE]))
