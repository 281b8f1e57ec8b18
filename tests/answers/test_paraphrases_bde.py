"""The same question in other words: rules read from paraphrases of the tuned sets b, d and e
(a head glued to the last of coordinated names, another verb of forecasting). One test per
rule, each on a document of its own (not the sets' fixtures), driven without a database
(tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

BANKS = excerpt(
    "城商行 2027 年中报综述：息差企稳",
    "## 汐川银行：零售转型见效\n汐川银行上半年拨备覆盖率 301.25%，较上年末提升 4.1 个百分点。\n\n"
    "## 溪口银行：资产质量承压\n溪口银行上半年拨备覆盖率 244.10%，较上年末下降 6.3 个百分点。",
)
BANK = excerpt(
    "汐川银行股份有限公司 2027 年半年度报告",
    "报告期末，本行拨备覆盖率 301.25%，不良贷款率 1.21%。",
)


def test_a_head_glued_to_the_last_of_coordinated_names_is_asked_of_each():
    # 汐川银行和溪口银行拨备覆盖率 is 汐川银行和溪口银行的拨备覆盖率: what is joined to an
    # entity's name is a name of its class (溪口银行, 行), the rest is asked of both
    # (reading._shared_head_apart)
    for question in (
        "汐川银行和溪口银行拨备覆盖率分别是多少？",
        "汐川银行、溪口银行拨备覆盖率各多少",
    ):
        first = answer(question, [BANK, BANKS])[0]
        assert "301.25" in first and "244.10" in first, first
        assert f"[[cite:{BANKS['id']}]]" in first, first
    # the floor holds: a head no excerpt states of the other name is not found for it
    first = answer("汐川银行和溪口银行不良贷款率分别是多少？", [BANK, BANKS])[0]
    assert "溪口银行" in first and "1.21" not in first.split("溪口银行", 1)[1], first


NOTE = excerpt(
    "临岚科技（300999）：订单高增，盈利能力提升",
    "潮汐证券研究所 | 公司研究 | 2027 年 4 月 28 日\n\n"
    "**投资建议：** 我们维持公司 2027—2029 年归母净利润预测为 3.41/4.05/4.87 亿元，"
    "对应 PE 21.2/17.9/14.9 倍。\n\n"
    "## 盈利预测与估值\n\n指标 | 2026A | 2027E | 2028E | 2029E\n\n"
    "营业收入（百万元） | 2,410 | 2,876 | 3,362 | 3,930\n\n"
    "归母净利润（百万元） | 281 | 341 | 405 | 487",
)
REPORT = excerpt(
    "临岚科技股份有限公司 2027 年第一季度报告", "报告期内，公司实现营业收入 6.12 亿元。"
)


def test_a_forecast_asked_with_a_verb_the_note_does_not_write_is_its_forecast():
    # 潮汐证券预计… asks what the note forecasts (its 2028E column): 预计, like 预测, is the
    # verb of the forecaster, and a verb no excerpt writes names nothing to be stated
    # (grammar.FORECASTER, reading._speaker_apart)
    first = answer("潮汐证券预计临岚科技2028年营业收入是多少", [REPORT, NOTE])[0]
    assert "3,362" in first, first
    assert f"[[cite:{NOTE['id']}]]" in first, first
    # the floor holds: a forecast the note does not make is not found
    assert not_found(answer("潮汐证券预计临岚科技2028年毛利率是多少", [REPORT, NOTE]))
