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
        # (the entity's name last, glued to the head: the name before it joins it)
        "溪口银行和汐川银行拨备覆盖率分别是多少？",
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


QUARTER = excerpt(
    "临岚科技股份有限公司 2027 年第一季度报告",
    "第二节 主要财务数据\n报告期内，公司实现营业收入 6.12 亿元，同比增长 12.5%。\n\n"
    "第四节 风险提示\n1. 下游光伏行业资本开支放缓可能导致订单下降。\n"
    "2. 铜材等原材料价格波动可能压缩毛利率。\n3. 海外收入占比 31%，汇率波动可能影响业绩。\n\n"
    "第五节 募集资金投向\n本次募集资金拟投资于以下项目：\n1. 智能产线扩建项目；\n"
    "2. 研发中心建设项目；\n3. 补充流动资金。",
)


def test_a_noun_phrase_naming_a_lists_heading_asks_the_whole_list():
    # 帮我查一下…的风险提示, …募集资金的投向 ask no figure and no one item: the thing named is
    # what the list's heading or lead-in names, so the section, every item, is the answer
    # (selection.heading_asked)
    first = answer("帮我查一下临岚科技一季报的风险提示", [QUARTER])[0]
    for item in ("资本开支放缓", "原材料价格波动", "汇率波动"):
        assert item in first, first
    first = answer("临岚科技募集资金的投向", [QUARTER])[0]
    for item in ("智能产线扩建项目", "研发中心建设项目", "补充流动资金"):
        assert item in first, first
    assert f"[[cite:{QUARTER['id']}]]" in first, first
    # one item asked is still that item, a figure still the figure
    second = answer("临岚科技第二个风险是什么", [QUARTER])[0]
    assert "铜材" in second and "汇率" not in second, second
    revenue = answer("临岚科技一季报营业收入", [QUARTER])[0]
    assert "6.12" in revenue and "资本开支" not in revenue, revenue


SEGMENTS = excerpt(
    "汐远保险集团股份有限公司 2026 年年度报告",
    "分部信息\n单位：百万元\n\n分部 | 营业收入 | 分部净利润\n\n寿险 | 158,216.40 | 10,408.72\n\n"
    "财产险 | 47,903.18 | 3,126.45\n\n资管 | 3,862.91 | 1,027.36\n\n合计 | 209,982.49 | 14,562.53",
)


def test_a_request_to_list_asks_which_ones():
    # 列一下…的经营分部 asks what 有哪些分部 asks: a request to list opening the question asks
    # which ones — a table's rows, not its total (grammar.LIST_REQUEST)
    first = answer("列一下汐远保险的经营分部", [SEGMENTS])[0]
    for row in ("寿险", "财产险", "资管"):
        assert row in first, first
    assert f"[[cite:{SEGMENTS['id']}]]" in first, first
    # the floor holds: a list the report does not state is not found
    assert not_found(answer("列一下汐远保险的主要风险", [SEGMENTS]))


_NOTICE = "汀溪精密机械股份有限公司 2026 年年度权益分派实施公告"
DIVIDEND = excerpt(
    _NOTICE,
    f"# {_NOTICE}\n\n## 重要内容提示：\n\n相关日期：\n\n"
    "股份类别 | 股权登记日 | 除权（息）日 | 现金红利发放日\n\n"
    "A 股 | 2027/5/20 | 2027/5/21 | 2027/5/21\n\n## 二、分配方案\n\n1. 发放年度：2026 年年度\n\n"
    "2. 分派对象：截至股权登记日下午上海证券交易所收市后登记在册的本公司全体股东。",
)
PLAN = excerpt(
    _NOTICE,
    f"# {_NOTICE}\n\n## 二、分配方案\n\n1. 发放年度：2026 年年度\n\n"
    "2. 分派对象：截至股权登记日下午上海证券交易所收市后登记在册的本公司全体股东。",
)


def test_a_day_asked_is_answered_by_a_date_not_by_a_sentence_naming_the_day():
    # 股权登记日是哪天 asks a date: the table's 2027/5/20 — a sentence that names the day
    # and writes no date (截至股权登记日…收市后) is not it, and where no excerpt dates the
    # day, it is not found (grammar.ASKS_DAY, selection.answers_form)
    first = answer("汀溪精密的股权登记日是哪天", [DIVIDEND])[0]
    assert "2027/5/20" in first, first
    assert f"[[cite:{DIVIDEND['id']}]]" in first, first
    assert not_found(answer("汀溪精密的股权登记日是哪天", [PLAN]))


NETWORK = excerpt(
    "汐港冷链物流股份有限公司 2026 年半年度报告",
    "截至报告期末，公司开通干线线路 298 条，冷藏车辆 2,105 台。\n表 1 分区域冷链网络（报告期末）\n\n"
    "区域 | 冷链仓储面积（万平方米） | 干线线路（条） | 冷藏车辆（台） | 仓库出租率\n\n"
    "华东 | 58.5 | 122 | 960 | 90.2%\n\n华北 | 31.8 | 76 | 645 | 85.4%\n\n"
    "西南 | 20.4 | 100 | 500 | 78.5%\n\n合计 | 110.7 | 298 | 2,105 | 86.9%\n\n"
    "第五节 董事会\n公司审计委员会由钟若兰、宋清和、魏明澈三名董事组成，其中钟若兰为召集人。",
)


def test_a_count_or_the_members_asked_as_a_head_name_the_form_of_the_answer():
    # 冷藏车数量 asks how many 冷藏车 (the row's 冷藏车辆 645 台), 审计委员会成员 who the
    # committee is made of (由…组成): heads naming the answer's form, not another thing
    # (grammar.LIGHT_HEADS)
    first = answer("汐港冷链华北区域冷藏车数量", [NETWORK])[0]
    assert "645" in first, first
    assert f"[[cite:{NETWORK['id']}]]" in first, first
    members = answer("汐港冷链审计委员会成员有哪些", [NETWORK])[0]
    for name in ("钟若兰", "宋清和", "魏明澈"):
        assert name in members, members
    # the floor holds: a count or a body the report does not state is not found
    assert not_found(answer("汐港冷链华北区域员工数量", [NETWORK]))
    assert not_found(answer("汐港冷链薪酬委员会成员有哪些", [NETWORK]))


PREVIEW = excerpt(
    "汀屿材料 2026 年度业绩预告",
    "汀屿材料股份有限公司\n2026 年度业绩预告\n\n一、本期业绩预计情况\n\n"
    "扣除非经常性损益后的净利润：预计 12,600 万元 至 14,100 万元，比上年同期增长 20.45% 至 "
    "34.79%；上年同期为盈利 10,460.18 万元。\n\n"
    "营业收入：预计 88,000 万元 至 95,000 万元；上年同期为 79,316.52 万元。",
)


def test_a_later_clause_asking_only_with_ne_asks_a_figure_again():
    # 营业收入预计多少？上年同期呢 asks two figures, as 上年同期是多少 would: the clause with
    # only 呢 asks what the clause before asked, of the year before — the forecast is not
    # dropped for it (reading._figures_asked)
    first = answer("汀屿材料2026年营业收入预计多少？上年同期呢", [PREVIEW])[0]
    assert "88,000" in first and "95,000" in first and "79,316.52" in first, first
    assert f"[[cite:{PREVIEW['id']}]]" in first, first
    # one clause asking the year before is still that year's figure alone
    prior = answer("汀屿材料上年同期营业收入是多少", [PREVIEW])[0]
    assert "79,316.52" in prior and "88,000" not in prior, prior


_PLAN = "汐岭软件股份有限公司 2027 年限制性股票激励计划（草案）摘要"
GRANTS = excerpt(
    _PLAN,
    f"# {_PLAN}\n\n## 二、拟授予的限制性股票数量\n\n"
    "本激励计划拟向激励对象授予限制性股票 520.00 万股，约占公司股本总额 52,000.00 万股的 1.00%。"
    "其中首次授予 455.00 万股，占本激励计划拟授予总量的 87.50%；预留 65.00 万股，占本激励计划拟授予"
    "总量的 12.50%。\n\n## 三、激励对象的范围及分配\n\n"
    "姓名 | 职务 | 获授的限制性股票数量（万股） | 占授予总数的比例\n\n"
    "祁远舟 | 董事长 | 30.00 | 5.77%",
)
LOCKUP = excerpt(
    _PLAN,
    "合计 | — | 520.00 | 100.00%\n\n## 五、限售期及解除限售安排\n\n"
    "本激励计划首次授予的限制性股票限售期分别为自授予登记完成之日起 12 个月、24 个月。"
    "激励对象获授的限制性股票在解除限售前不得转让、用于担保或偿还债务。",
)


def test_a_count_head_the_excerpts_write_glued_to_the_thing_is_part_of_its_name():
    # 数量 is a column's word here (获授的限制性股票数量（万股）): asked as written, not cut
    # to 限制性股票 that a sentence of months also names (grammar.COUNT_HEADS,
    # reading.topic_phrases)
    first = answer("汐岭软件激励计划授予的限制性股票数量", [GRANTS, LOCKUP])[0]
    assert "520.00" in first and "12 个月" not in first, first
    assert f"[[cite:{GRANTS['id']}]]" in first, first
    # (获授数量 of the column 获授的限制性股票数量: the row's share of the whole)
    share = answer("祁远舟获授数量占汐岭软件授予总数的比例是多少？", [GRANTS, LOCKUP])[0]
    assert "5.77" in share, share
