"""The ``quarry`` evaluation fixture: four disclosure files of kinds the other fixtures do not
have — an insurer's annual report, a dividend implementation notice, a profit forecast and a
share incentive plan — ingested the way an operator ingests them (a manifest's ``file:``),
written by someone who had not seen the extractive reader's rules, before any change made for
them.

- 澄远保险集团's 2026 annual report summary as a **PDF** of four pages: the main indicators
  (原保险保费收入, 新业务价值, 内含价值, 综合成本率 … with 本年 / 上年 / 变动 columns), the
  solvency table with a header in two rows (本季度末 / 上季度末 over 核心 / 综合偿付能力充足率),
  the segments (寿险, 财产险, 资管), the investment assets table split over a page break (its
  rows go on after the next page's running header, the header not repeated); running headers
  and page footers.
- 柘川精密's 2026 年年度权益分派实施公告 as a **DOCX**: the cash dividend per share, the
  dates (股权登记日, 除权（息）日, 现金红利发放日) as a table, the tax withheld per kind of holder
  in prose, a contact.
- 岑溪光电's 2026 年度业绩预告 as **.txt**: forecast ranges (预计 … 至 … 万元, 同比增长 …% 至
  …%), the prior year's figures, the reasons as a numbered list.
- 霁川软件's 2027 年限制性股票激励计划（草案）摘要 as **Markdown**: the grant price and quantity,
  the grantees by role, the performance target of each year and the unlocking schedule as
  tables.

All companies, people and figures are fictional. ``write_quarry(directory)`` writes the files
and the manifest that names them and returns the manifest's path.
"""

from pathlib import Path

import docx
from docx.enum.text import WD_BREAK

from tests.answers.cjk_pdf import make_cjk_pdf, wrap
from tests.answers.docx_tables import docx_table

INSURER_TITLE = "澄远保险集团股份有限公司 2026 年年度报告摘要"
INSURER_HEADER = "澄远保险集团股份有限公司                          2026 年年度报告摘要"

INSURER_PAGES: list[list] = [
    [
        "证券代码：601585          证券简称：澄远保险          公告编号：临 2027-011",
        "",
        INSURER_TITLE,
        "",
        "一、重要提示",
        *wrap(
            "本年度报告摘要来自年度报告全文，为全面了解本公司的经营成果、财务状况及未来发展规划，"
            "投资者应当到上海证券交易所网站仔细阅读年度报告全文。立衡会计师事务所（特殊普通合伙）"
            "为本公司出具了标准无保留意见的审计报告。"
        ),
        *wrap(
            "董事会决议通过的本报告期利润分配预案：以总股本 9,016,420,000 股为基数，向全体股东"
            "每 10 股派发现金红利 6.20 元（含税），共计约 55.90 亿元，不实施资本公积转增股本。"
        ),
        "",
        "二、主要经营指标",
        "单位：人民币百万元",
        ["项目", "本年", "上年", "变动（%）"],
        ["原保险保费收入", "186,432.57", "172,908.14", "7.82"],
        ["新业务价值", "12,846.30", "11,275.62", "13.93"],
        ["内含价值", "263,518.44", "241,086.73", "9.30"],
        ["综合成本率（%）", "97.6", "98.9", "下降 1.3 个百分点"],
        ["归属于母公司股东的净利润", "14,215.08", "12,736.51", "11.61"],
        ["基本每股收益（元）", "1.58", "1.41", "12.06"],
        ["加权平均净资产收益率（%）", "11.84", "11.02", "上升 0.82 个百分点"],
        ["总投资收益率（%）", "4.62", "3.95", "上升 0.67 个百分点"],
        "注：新业务价值、内含价值按本公司精算假设计算；综合成本率为财产险业务口径。",
        "",
        "第 1 页 共 4 页",
    ],
    [
        INSURER_HEADER,
        "",
        "三、偿付能力",
        "单位：%",
        ["公司", "本季度末（2026 年 12 月 31 日）", "", "上季度末（2026 年 9 月 30 日）", ""],
        ["", *["核心偿付能力充足率", "综合偿付能力充足率"] * 2],
        ["集团合并", "142.6", "231.8", "138.9", "226.4"],
        ["澄远人寿", "118.3", "206.5", "115.7", "201.2"],
        ["澄远财险", "176.4", "248.9", "171.8", "243.5"],
        *wrap(
            "本公司及主要保险子公司偿付能力充足率均满足监管要求。在最近一期风险综合评级中，"
            "澄远人寿为 AA 类，澄远财险为 A 类。"
        ),
        "",
        "四、分部经营情况",
        "单位：人民币百万元",
        ["分部", "营业收入", "分部净利润", "净利润同比变动（%）", "分部资产总额"],
        ["寿险", "158,216.40", "10,408.72", "14.85", "1,486,302.55"],
        ["财产险", "47,903.18", "3,126.45", "6.27", "96,418.37"],
        ["资管", "3,862.91", "1,027.36", "2.14", "12,870.64"],
        ["抵销及其他", "-1,254.33", "-347.45", "不适用", "-8,935.20"],
        ["合计", "208,728.16", "14,215.08", "11.61", "1,586,656.36"],
        "注：分部净利润为归属于母公司股东的净利润。",
        "",
        "第 2 页 共 4 页",
    ],
    [
        INSURER_HEADER,
        "",
        "五、经营情况讨论与分析",
        "（一）寿险业务",
        *wrap(
            "2026 年，澄远人寿实现新业务价值 128.46 亿元，同比增长 13.93%；新业务价值率为 23.6%，"
            "同比上升 2.1 个百分点。个人代理人月均人数 48,216 人，同比下降 6.4%，人均新业务价值"
            "同比增长 19.8%。13 个月保单继续率为 94.3%，25 个月保单继续率为 89.7%。"
        ),
        "（二）财产险业务",
        *wrap(
            "澄远财险实现原保险保费收入 452.17 亿元，同比增长 5.36%，其中车险保费收入 264.19 亿元，"
            "非车险保费收入 187.98 亿元。综合成本率为 97.6%，同比下降 1.3 个百分点，其中综合赔付率"
            " 68.9%，综合费用率 28.7%。"
        ),
        "（三）资产管理业务",
        *wrap(
            "澄远资产管理规模 6,812.40 亿元，较上年末增长 10.5%，其中第三方资产管理规模 1,946.75 亿元。"
        ),
        "（四）投资资产",
        "单位：人民币百万元",
        ["投资品种", "期末账面价值", "占比（%）", "上年末占比（%）"],
        ["现金及现金等价物", "21,604.18", "1.67", "2.05"],
        ["定期存款", "98,317.42", "7.62", "8.31"],
        ["债券投资", "842,516.87", "65.28", "63.87"],
        ["其中：国债及地方政府债", "503,128.60", "38.99", "36.42"],
        "",
        "第 3 页 共 4 页",
    ],
    [
        INSURER_HEADER,
        "",
        ["股票", "96,205.31", "7.45", "6.92"],
        ["证券投资基金", "58,719.64", "4.55", "4.96"],
        ["长期股权投资", "61,880.25", "4.79", "5.02"],
        ["投资性房地产", "17,342.09", "1.34", "1.41"],
        ["其他投资", "93,958.61", "7.28", "7.46"],
        ["合计", "1,290,544.37", "100.00", "100.00"],
        *wrap(
            "2026 年，本公司实现净投资收益率 3.71%，同比下降 0.18 个百分点；总投资收益率 4.62%，"
            "同比上升 0.67 个百分点；综合投资收益率 5.36%。"
        ),
        "",
        "六、其他重要事项",
        *wrap(
            "经第七届董事会第九次会议审议通过，聘任罗致衡先生为本公司首席精算师，其任职资格已获"
            "监管机构核准。"
        ),
        "",
        "澄远保险集团股份有限公司董事会",
        "2027 年 3 月 26 日",
        "第 4 页 共 4 页",
    ],
]

DIVIDEND_TITLE = "柘川精密机械股份有限公司 2026 年年度权益分派实施公告"

DIVIDEND_DATES = [
    ("股份类别", "股权登记日", "最后交易日", "除权（息）日", "现金红利发放日"),
    ("A 股", "2027/5/20", "－", "2027/5/21", "2027/5/21"),
]


def write_dividend_docx(path: Path) -> Path:
    document = docx.Document()
    document.core_properties.title = DIVIDEND_TITLE
    document.add_paragraph("证券代码：603792        证券简称：柘川精密        公告编号：2027-026")
    document.add_heading(DIVIDEND_TITLE, level=1)
    document.add_paragraph(
        "本公司董事会及全体董事保证本公告内容不存在任何虚假记载、误导性陈述或者重大遗漏，并对其"
        "内容的真实性、准确性和完整性承担法律责任。"
    )
    document.add_heading("重要内容提示：", level=2)
    document.add_paragraph("每股分配比例：A 股每股现金红利 0.35 元（含税）")
    document.add_paragraph("相关日期：")
    docx_table(document, DIVIDEND_DATES)
    document.add_paragraph("差异化分红送转：否")
    document.add_heading("一、通过分配方案的股东大会届次和日期", level=2)
    document.add_paragraph(
        "本次利润分配方案经公司 2027 年 4 月 28 日的 2026 年年度股东大会审议通过。"
    )
    document.add_heading("二、分配方案", level=2)
    document.add_paragraph("1. 发放年度：2026 年年度")
    document.add_paragraph(
        "2. 分派对象：截至股权登记日下午上海证券交易所收市后，在中国证券登记结算有限责任公司上海"
        "分公司（以下简称“中国结算上海分公司”）登记在册的本公司全体股东。"
    )
    document.add_paragraph(
        "3. 分配方案：本次利润分配以方案实施前的公司总股本 612,480,000 股为基数，每股派发现金红利"
        " 0.35 元（含税），共计派发现金红利 214,368,000.00 元。本次不送红股，不以资本公积转增股本。"
    )
    document.add_heading("三、分配实施办法", level=2)
    document.add_paragraph(
        "1. 除公司自行发放对象外，其余股东的现金红利委托中国结算上海分公司通过其资金清算系统向"
        "股权登记日上海证券交易所收市后登记在册并在上海证券交易所各会员办理了指定交易的股东派发。"
    )
    document.add_paragraph(
        "2. 自行发放对象：公司控股股东柘川控股集团有限公司、实际控制人沈怀嵘先生的现金红利由公司"
        "自行发放。"
    ).add_run().add_break(WD_BREAK.PAGE)
    document.add_paragraph("3. 扣税说明")
    document.add_paragraph(
        "（1）对于持有公司无限售条件流通股的自然人股东和证券投资基金，根据《关于上市公司股息红利"
        "差别化个人所得税政策有关问题的通知》的有关规定，持股期限超过 1 年的，股息红利所得暂免征收"
        "个人所得税；持股期限在 1 年以内（含 1 年）的，公司暂不扣缴个人所得税，每股实际派发现金"
        "红利人民币 0.35 元，待其转让股票时，由中国结算上海分公司根据其持股期限计算应纳税额。其中，"
        "持股期限在 1 个月以内（含 1 个月）的，其股息红利所得全额计入应纳税所得额，实际税负为 20%；"
        "持股期限在 1 个月以上至 1 年（含 1 年）的，暂减按 50% 计入应纳税所得额，实际税负为 10%。"
    )
    document.add_paragraph(
        "（2）对于合格境外机构投资者（QFII）股东，由公司按照 10% 的税率统一代扣代缴企业所得税，"
        "税后每股实际派发现金红利人民币 0.315 元。"
    )
    document.add_paragraph(
        "（3）对于通过沪股通持有公司股票的香港市场投资者（包括企业和个人），其现金红利由公司通过"
        "中国结算上海分公司按股票名义持有人账户以人民币派发，按照 10% 的税率代扣所得税，税后每股"
        "实际派发现金红利人民币 0.315 元。"
    )
    document.add_paragraph(
        "（4）对于其他机构投资者和法人股东，公司不代扣代缴所得税，由纳税人按税法规定自行判断是否"
        "应在当地缴纳企业所得税，实际派发现金红利为税前每股人民币 0.35 元。"
    )
    document.add_heading("四、有关咨询办法", level=2)
    document.add_paragraph("关于本次权益分派如有疑问，请按照以下联系方式咨询：")
    document.add_paragraph("联系部门：公司证券事务部")
    document.add_paragraph("联系电话：0573-8826 4105")
    document.add_paragraph("特此公告。")
    document.add_paragraph("柘川精密机械股份有限公司董事会")
    document.add_paragraph("2027 年 5 月 14 日")
    document.save(str(path))
    return path


FORECAST_NOTICE = """证券代码：300684          证券简称：岑溪光电          公告编号：2027-004

岑溪光电科技股份有限公司
2026 年度业绩预告

本公司及董事会全体成员保证信息披露的内容真实、准确、完整，没有虚假记载、误导性陈述或重大遗漏。

一、本期业绩预计情况

1. 业绩预告期间：2026 年 1 月 1 日至 2026 年 12 月 31 日

2. 业绩预告情况：预计净利润为正值且属于同向上升情形

归属于上市公司股东的净利润：预计 42,000 万元 至 48,000 万元，比上年同期增长 35.27% 至 54.59%；上年同期为盈利 31,049.36 万元。

扣除非经常性损益后的净利润：预计 38,500 万元 至 44,000 万元，比上年同期增长 41.16% 至 61.33%；上年同期为盈利 27,274.12 万元。

营业收入：预计 312,000 万元 至 336,000 万元；上年同期为 268,415.77 万元。

基本每股收益：预计 0.95 元/股 至 1.09 元/股；上年同期为 0.70 元/股。

二、与会计师事务所沟通情况

本次业绩预告相关的财务数据未经注册会计师审计。公司已就业绩预告有关事项与年报审计会计师事务所进行了预沟通，双方在业绩预告方面不存在分歧。

三、业绩变动原因说明

1. 报告期内，车载激光雷达光学组件需求快速增长，公司该类产品出货量同比增长约 85%，成为业绩增长的主要来源；

2. 公司越南生产基地于 2026 年二季度全面投产，规模效应显现，综合毛利率较上年同期提升约 2.3 个百分点；

3. 报告期内，公司加强应收账款管理，信用减值损失较上年同期减少约 2,600 万元；

4. 报告期内，公司预计非经常性损益对净利润的影响金额约为 3,700 万元，主要为计入当期损益的政府补助。

四、风险提示

本次业绩预告是公司财务部门初步测算的结果，具体财务数据将在公司 2026 年年度报告中详细披露。敬请广大投资者谨慎决策，注意投资风险。

特此公告。

岑溪光电科技股份有限公司董事会
2027 年 1 月 22 日
"""

INCENTIVE_PLAN = """# 霁川软件股份有限公司 2027 年限制性股票激励计划（草案）摘要

证券代码：688357 | 证券简称：霁川软件 | 公告编号：2027-018 | 2027 年 2 月 9 日

## 一、股权激励方式及股票来源

本激励计划采取的激励工具为第一类限制性股票。股票来源为公司向激励对象定向发行的本公司人民币 A 股普通股股票。

## 二、拟授予的限制性股票数量

本激励计划拟向激励对象授予限制性股票 600.00 万股，约占本激励计划草案公告时公司股本总额 40,000.00 万股的 1.50%。其中首次授予 520.00 万股，占本激励计划拟授予总量的 86.67%；预留 80.00 万股，占本激励计划拟授予总量的 13.33%。

## 三、激励对象的范围及分配

本激励计划首次授予的激励对象共计 186 人，包括公司董事、高级管理人员及核心技术（业务）骨干，不包括独立董事、监事。

| 姓名 | 职务 | 获授的限制性股票数量（万股） | 占授予限制性股票总数的比例 | 占本计划公告日股本总额的比例 |
| --- | --- | --- | --- | --- |
| 祁远航 | 董事、总经理 | 40.00 | 6.67% | 0.10% |
| 苏明蕙 | 副总经理、财务总监 | 25.00 | 4.17% | 0.06% |
| 江砚秋 | 副总经理 | 20.00 | 3.33% | 0.05% |
| 贝霖 | 董事会秘书 | 15.00 | 2.50% | 0.04% |
| 核心技术（业务）骨干（182 人） | — | 420.00 | 70.00% | 1.05% |
| 预留部分 | — | 80.00 | 13.33% | 0.20% |
| 合计 | — | 600.00 | 100.00% | 1.50% |

## 四、授予价格及其确定方法

限制性股票的授予价格（含预留部分）为每股 18.46 元，即满足授予条件后，激励对象可以每股 18.46 元的价格购买公司向激励对象增发的公司 A 股普通股股票。

授予价格不低于股票票面金额，且不低于下列价格较高者：本激励计划草案公告前 1 个交易日公司股票交易均价每股 36.91 元的 50%，为每股 18.46 元；本激励计划草案公告前 120 个交易日公司股票交易均价每股 33.58 元的 50%，为每股 16.79 元。

## 五、限售期及解除限售安排

本激励计划首次授予的限制性股票限售期分别为自授予登记完成之日起 12 个月、24 个月、36 个月。激励对象获授的限制性股票在解除限售前不得转让、用于担保或偿还债务。

| 解除限售安排 | 解除限售时间 | 解除限售比例 |
| --- | --- | --- |
| 第一个解除限售期 | 自授予登记完成之日起 12 个月后的首个交易日起至授予登记完成之日起 24 个月内的最后一个交易日当日止 | 40% |
| 第二个解除限售期 | 自授予登记完成之日起 24 个月后的首个交易日起至授予登记完成之日起 36 个月内的最后一个交易日当日止 | 30% |
| 第三个解除限售期 | 自授予登记完成之日起 36 个月后的首个交易日起至授予登记完成之日起 48 个月内的最后一个交易日当日止 | 30% |

## 六、公司层面业绩考核要求

本激励计划首次授予部分的考核年度为 2027—2029 年三个会计年度，每个会计年度考核一次。以 2026 年营业收入、净利润为基数，各年度业绩考核目标如下：

| 解除限售期 | 考核年度 | 营业收入增长率（A） | 净利润增长率（B） |
| --- | --- | --- | --- |
| 第一个解除限售期 | 2027 年 | 不低于 20% | 不低于 15% |
| 第二个解除限售期 | 2028 年 | 不低于 44% | 不低于 32% |
| 第三个解除限售期 | 2029 年 | 不低于 73% | 不低于 52% |

注：上述“净利润”指经审计的归属于上市公司股东的扣除非经常性损益的净利润，并剔除本次及其他股权激励计划股份支付费用的影响。公司须同时满足营业收入增长率（A）与净利润增长率（B）目标方可解除限售；未满足的，当期可解除限售的限制性股票由公司按授予价格回购注销。

## 七、个人层面绩效考核要求

激励对象的个人绩效考核结果分为 A、B、C、D 四个档次，对应的个人层面解除限售比例分别为 100%、80%、60% 和 0%。

## 八、会计处理

经测算，首次授予的 520.00 万股限制性股票需摊销的总费用约为 9,568.40 万元，在限售期内按解除限售比例分期确认。
"""

QUARRY_MANIFEST = """# An evaluation fixture: a desk reading kinds of disclosure the other fixtures lack — an
# insurer's annual report summary as a PDF, a dividend implementation notice as a DOCX, a
# profit forecast as text, a share incentive plan in Markdown
# (tests/answers/quarry_fixture.py writes this file and them). All fictional.
tenants:
  - key: quarry
    name: "采石研究"
    users:
      - {{username: qy-analyst, token: "st_quarry_analyst_000001"}}
    knowledge:
      - key: filings
        type: MANAGED
        versions:
          - version: "2027-05"
            status: PUBLISHED
            documents:
              - key: chengyuan-insurance-2026
                file: {insurer}
                facts:
                  - {{key: new_business_value, label: "新业务价值", value: 128.46, unit: "亿元", asOf: "2026-12-31", page: 3}}
                  - {{key: combined_ratio, label: "综合成本率", value: 97.6, unit: "%", asOf: "2026-12-31", page: 3}}
              - key: zhechuan-dividend-2026
                file: {dividend}
              - key: cenxi-forecast-2026
                file: {forecast}
              - key: jichuan-incentive-2027
                file: {plan}
    agents:
      - key: researcher
        versions:
          - version: "1"
            status: PUBLISHED
            model: {{provider: extractive}}
            allowedKnowledge: ["filings@2027-05"]
    apps:
      - slug: quarry-desk
        name: "采石研究台"
        members:
          - {{user: qy-analyst, history: true}}
        leases:
          - {{knowledge: "filings@2027-05", expiresAt: null}}
        agents: {{researcher: "1"}}
"""


def write_quarry(directory: Path) -> Path:
    insurer = directory / "chengyuan-insurance-2026.pdf"
    insurer.write_bytes(
        make_cjk_pdf(INSURER_PAGES, title=INSURER_TITLE, columns=[50, 190, 300, 410, 520])
    )
    dividend = write_dividend_docx(directory / "zhechuan-dividend-2026.docx")
    forecast = directory / "cenxi-forecast-2026.txt"
    forecast.write_text(FORECAST_NOTICE, encoding="utf-8")
    plan = directory / "jichuan-incentive-2027.md"
    plan.write_text(INCENTIVE_PLAN, encoding="utf-8")
    manifest = directory / "quarry_manifest.yaml"
    manifest.write_text(
        QUARRY_MANIFEST.format(
            insurer=insurer.name, dividend=dividend.name, forecast=forecast.name, plan=plan.name
        ),
        encoding="utf-8",
    )
    return manifest
