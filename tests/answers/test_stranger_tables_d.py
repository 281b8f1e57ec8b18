"""Tables and lists a stranger's questions ask of in their own words: the table states the
thing, the question words it otherwise (分红 over a 权益分派 notice, 哪天 before the act
asked the date of…). One test per rule, each on a document of its own (not the sets'
fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt

NOTICE = excerpt(
    "松岭机电股份有限公司 2026 年年度权益分派实施公告",
    "## 重要内容提示：\n\n"
    "每股分配比例：A 股每股现金红利 0.28 元（含税）\n\n"
    "相关日期：\n\n"
    "股份类别 | 股权登记日 | 除权（息）日 | 现金红利发放日\n\n"
    "A 股 | 2027/6/11 | 2027/6/12 | 2027/6/13\n\n"
    "## 三、分配实施办法\n\n"
    "1. 公司控股股东的现金红利由公司自行发放。",
)


# -- a dividend's dates ---------------------------------------------------------------------


def test_a_dividend_is_what_a_distribution_notice_implements():
    # 分红 is the notice's 权益分派: the date row answers under the notice's title
    first = answer("松岭机电这次分红的股权登记日是哪天？", [NOTICE])[0]
    assert "2027/6/11" in first, first
    assert f"[[cite:{NOTICE['id']}]]" in first, first


def test_a_date_asked_before_its_act_asks_the_date_of_the_act():
    # 哪天 is a question word (not 哪 and a 天 glued to 发放): the column of the act's date
    first = answer("松岭机电现金红利哪天发放？", [NOTICE])[0]
    assert "现金红利发放日）：2027/6/13" in first, first
    assert f"[[cite:{NOTICE['id']}]]" in first, first
