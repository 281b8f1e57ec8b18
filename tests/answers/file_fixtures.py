"""Two fixtures whose documents are FILES ingested the way an operator ingests them (a
manifest's ``file:``, knowledge/files.py): the evaluation sets of
tests/answers/sets/ ask about them. All companies and figures are fictional.

- ``coldchain`` — 远川冷链's half-year report as a **PDF with a table** (regional cold
  storage area, trunk lines, vehicles, occupancy: cells on one line, as a typeset table
  extracts) and a one-line list of risks (``第四节 风险提示。一、…；二、…；三、…``);
  a peer's summary (北港冷链) written inline, for comparisons.
- ``chenghu`` — 澄湖电子's annual report as a **DOCX with a table** (gross margin by
  product), 岭峰生物's quarterly report as **Markdown with a table** (研发费用 in a row),
  and a fund's quarterly report whose top holdings are one line
  (``1. X，占…%；2. Y…；3. Z…``).

``write_fixture(name, directory)`` writes the files and the manifest that names them,
and returns the manifest's path; ``apply_manifest`` it like any other.
"""

from pathlib import Path

import docx
from docx.enum.text import WD_BREAK

from tests.answers.cjk_pdf import make_cjk_pdf, wrap
from tests.answers.docx_tables import docx_table
from tests.answers.harbor_fixture import write_harbor
from tests.answers.ledger_fixture import write_ledger
from tests.answers.quarry_fixture import write_quarry

# --------------------------------------------------------------------------- coldchain

YUANCHUAN_PAGES: list[list] = [
    [
        "远川冷链物流股份有限公司 2026 年半年度报告",
        "",
        "第一节 重要提示",
        *wrap(
            "公司董事会及全体董事保证本报告内容的真实、准确、完整。本半年度报告未经审计。"
            "公司不存在控股股东及其关联方非经营性占用资金的情况。"
        ),
        "",
        "第二节 主要会计数据和财务指标",
        *wrap(
            "报告期内，公司实现营业收入 86.3 亿元，同比增长 14.2%；归属于上市公司股东的"
            "净利润 4.7 亿元，同比增长 9.6%；扣除非经常性损益后的净利润 4.3 亿元。"
        ),
        *wrap(
            "经营活动产生的现金流量净额 11.5 亿元，同比增长 22.8%；报告期末资产负债率为 46.8%，"
            "较上年末下降 2.1 个百分点。"
        ),
    ],
    [
        "第三节 经营情况讨论与分析",
        "一、冷链网络",
        *wrap(
            "截至报告期末，公司冷链仓储面积合计 169.9 万平方米，较上年末增加 12.6 万平方米；"
            "干线运输网络覆盖 31 个省级行政区，开通干线线路 377 条，自有及合作冷藏车辆 3,245 台。"
        ),
        "表 1 分区域冷链网络（报告期末）",
        ["区域", "冷链仓储面积（万平方米）", "干线线路（条）", "冷藏车辆（台）", "仓库出租率"],
        ["华东", "68.5", "142", "1,260", "91.2%"],
        ["华南", "41.2", "96", "830", "88.7%"],
        ["华北", "37.8", "88", "745", "86.4%"],
        ["西南", "22.4", "51", "410", "79.5%"],
        ["合计", "169.9", "377", "3,245", "87.9%"],
        "",
        "二、业务结构",
        *wrap(
            "报告期内，冷链仓储收入 31.4 亿元，占营业收入的 36.4%；干线运输收入 38.9 亿元，"
            "占营业收入的 45.1%；城市配送收入 16.0 亿元，占营业收入的 18.5%。"
        ),
        *wrap("医药冷链业务收入同比增长 27.3%，生鲜食品冷链业务收入同比增长 8.1%。"),
    ],
    [
        "第四节 风险提示。一、燃油价格波动可能推高干线运输成本；二、新建冷库产能爬坡期较长，"
        "短期内可能拉低仓库出租率；三、食品安全与温控事故可能导致客户索赔及声誉损失。",
        "",
        "第五节 其他重要事项",
        *wrap(
            "2026 年 7 月，公司与一家东南亚物流企业签署合作协议，共建跨境冷链通道，"
            "首期投资 3.2 亿元。"
        ),
        *wrap("报告期内，公司前五大客户合计销售额占营业收入的 21.6%。"),
    ],
]

BEIGANG_PAGE = """北港冷链供应链股份有限公司 2026 年半年度报告摘要

一、主要财务数据
报告期内，公司实现营业收入 52.7 亿元，同比增长 6.3%；归属于上市公司股东的净利润 2.1 亿元，同比下降 3.5%。报告期末资产负债率为 55.2%。

二、经营情况
截至报告期末，公司冷链仓储面积 96.4 万平方米，开通干线线路 214 条，冷藏车辆 1,870 台。公司主要服务华北与东北区域的乳制品和速冻食品客户。"""

COLDCHAIN_MANIFEST = """# An evaluation fixture: a logistics desk whose half-year report is a PDF with a table
# (tests/answers/file_fixtures.py writes this file and the PDF). All figures fictional.
tenants:
  - key: yuanchuan
    name: "远川研究"
    users:
      - {{username: yc-analyst, token: "st_yuanchuan_analyst_0001"}}
    knowledge:
      - key: logistics
        type: MANAGED
        versions:
          - version: "2026-H1"
            status: PUBLISHED
            documents:
              - key: yuanchuan-logistics-2026h1
                file: {pdf}
                facts:
                  - {{key: revenue_h1, label: "上半年营业收入", value: 86.3, unit: "亿元", asOf: "2026-06-30", page: 1}}
                  - {{key: net_profit_h1, label: "上半年归母净利润", value: 4.7, unit: "亿元", asOf: "2026-06-30", page: 1}}
                  - {{key: debt_ratio, label: "资产负债率", value: 46.8, unit: "%", asOf: "2026-06-30", page: 1}}
                  - {{key: cold_storage_area, label: "冷链仓储面积", value: 169.9, unit: "万平方米", asOf: "2026-06-30", page: 2}}
                  - {{key: storage_revenue, label: "冷链仓储收入", value: 31.4, unit: "亿元", asOf: "2026-06-30", page: 2}}
              - key: beigang-cold-chain-2026h1
                title: "北港冷链供应链股份有限公司 2026 年半年度报告摘要"
                pages:
                  - |
{beigang}
                facts:
                  - {{key: revenue_h1, label: "上半年营业收入", value: 52.7, unit: "亿元", asOf: "2026-06-30"}}
                  - {{key: cold_storage_area, label: "冷链仓储面积", value: 96.4, unit: "万平方米", asOf: "2026-06-30"}}
    agents:
      - key: researcher
        versions:
          - version: "1"
            status: PUBLISHED
            model: {{provider: extractive}}
            allowedKnowledge: ["logistics@2026-H1"]
    apps:
      - slug: cold-desk
        name: "冷链研究台"
        members:
          - {{user: yc-analyst, history: true}}
        leases:
          - {{knowledge: "logistics@2026-H1", expiresAt: null}}
        agents: {{researcher: "1"}}
"""


def _indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line if line else "" for line in text.split("\n"))


def write_coldchain(directory: Path) -> Path:
    pdf = directory / "yuanchuan-logistics-2026h1.pdf"
    pdf.write_bytes(
        make_cjk_pdf(
            YUANCHUAN_PAGES,
            title="远川冷链物流股份有限公司 2026 年半年度报告",
            columns=[50, 110, 290, 390, 480],
        )
    )
    manifest = directory / "coldchain_manifest.yaml"
    manifest.write_text(
        COLDCHAIN_MANIFEST.format(pdf=pdf.name, beigang=_indent(BEIGANG_PAGE, 20)),
        encoding="utf-8",
    )
    return manifest


# --------------------------------------------------------------------------- chenghu

MARGIN_TABLE = [
    ("产品", "营业收入（亿元）", "营业成本（亿元）", "毛利率", "毛利率比上年增减"),
    ("汽车电子", "96.5", "70.2", "27.3%", "增加 2.4 个百分点"),
    ("消费电子", "78.1", "63.4", "18.8%", "减少 0.9 个百分点"),
    ("工业控制", "40.2", "29.0", "27.9%", "增加 0.6 个百分点"),
    ("合计", "214.8", "162.6", "24.3%", "增加 1.1 个百分点"),
]


def write_chenghu_docx(path: Path) -> Path:
    document = docx.Document()
    document.core_properties.title = "澄湖电子股份有限公司 2025 年年度报告摘要"
    document.add_heading("澄湖电子股份有限公司 2025 年年度报告摘要", level=1)
    document.add_heading("一、主要财务数据", level=2)
    document.add_paragraph(
        "2025 年，公司实现营业收入 214.8 亿元，同比增长 11.7%；归属于上市公司股东的净利润"
        " 17.6 亿元，同比增长 15.2%；综合毛利率为 24.3%，较上年提高 1.1 个百分点。"
    )
    document.add_heading("二、分产品经营情况", level=2)
    document.add_paragraph("表 2 营业收入、营业成本及毛利率（按产品）")
    docx_table(document, MARGIN_TABLE)
    document.add_paragraph(
        "汽车电子业务受益于新能源车型定点项目量产，收入同比增长 26.8%；消费电子业务受终端需求"
        "疲弱影响，收入同比下降 4.5%。"
    ).add_run().add_break(WD_BREAK.PAGE)
    document.add_heading("三、研发与人员", level=2)
    document.add_paragraph(
        "报告期末公司研发人员 3,920 人，占员工总数的 28.4%；全年研发投入 15.9 亿元，"
        "占营业收入的 7.4%。公司拥有有效发明专利 1,146 项。"
    )
    document.add_heading("四、利润分配", level=2)
    document.add_paragraph("公司拟以总股本为基数，向全体股东每 10 股派发现金红利 3.50 元（含税）。")
    document.add_heading("五、主要风险", level=2)
    document.add_paragraph(
        "公司面临的主要风险包括：消费电子需求复苏不及预期的风险；车规级芯片供应波动的风险；"
        "汇率波动风险。"
    )
    document.save(path)
    return path


LINGFENG_MARKDOWN = """# 岭峰生物科技股份有限公司 2026 年第三季度报告

## 一、主要财务数据

单位：万元（每股收益除外）

| 项目 | 本报告期 | 本报告期比上年同期增减 | 年初至报告期末 |
| --- | --- | --- | --- |
| 营业收入 | 132,560 | 12.4% | 371,880 |
| 归属于上市公司股东的净利润 | 18,240 | 8.7% | 49,615 |
| 研发费用 | 21,730 | 25.9% | 60,470 |
| 基本每股收益（元/股） | 0.41 | 7.9% | 1.12 |

## 二、经营情况

本报告期公司研发费用率为 16.4%，同比提高 1.7 个百分点，主要因两项单抗药物进入三期临床。核心产品“岭峰瑞康”实现销售收入 4.6 亿元，同比增长 31.2%。

截至报告期末，公司在研管线 23 项，其中 4 项处于三期临床阶段。
"""

CHENGHU_FUND_PAGE = """澄湖成长精选混合型证券投资基金 2026 年第 3 季度报告

§1 主要财务指标
本报告期基金份额净值增长率为 4.37%，同期业绩比较基准收益率为 3.05%。报告期末基金资产净值 18.6 亿元，股票仓位为 88.5%。

§2 投资组合报告
报告期末基金前三名股票投资明细：1. 澄湖电子，占基金资产净值 9.6%；2. 岭峰生物，占基金资产净值 7.2%；3. 南枫半导体，占基金资产净值 5.8%。
管理人认为，汽车电子与创新药仍是四季度的主要配置方向。"""

CHENGHU_MANIFEST = """# An evaluation fixture: a desk whose reports are a DOCX with a table, a Markdown file with a
# table and a fund report written inline (tests/answers/file_fixtures.py writes the files).
tenants:
  - key: chenghu
    name: "澄湖研究"
    users:
      - {{username: pm, token: "st_chenghu_pm_token_00001"}}
    knowledge:
      - key: filings
        type: MANAGED
        versions:
          - version: "2026-10"
            status: PUBLISHED
            documents:
              - key: chenghu-electronics-2025
                file: {docx}
                facts:
                  - {{key: revenue_2025, label: "营业收入", value: 214.8, unit: "亿元", asOf: "2025-12-31", page: 1}}
                  - {{key: net_profit_2025, label: "归母净利润", value: 17.6, unit: "亿元", asOf: "2025-12-31", page: 1}}
                  - {{key: gross_margin_2025, label: "综合毛利率", value: 24.3, unit: "%", asOf: "2025-12-31", page: 1}}
                  - {{key: rd_spend_2025, label: "研发投入", value: 15.9, unit: "亿元", asOf: "2025-12-31", page: 2}}
              - key: lingfeng-bio-2026q3
                file: {markdown}
                facts:
                  - {{key: rd_expense_ratio, label: "研发费用率", value: 16.4, unit: "%", asOf: "2026-09-30"}}
                  - {{key: core_product_sales, label: "岭峰瑞康销售收入", value: 4.6, unit: "亿元", asOf: "2026-09-30"}}
              - key: chenghu-growth-fund-2026q3
                title: "澄湖成长精选混合型证券投资基金 2026 年第 3 季度报告"
                pages:
                  - |
{fund}
                facts:
                  - {{key: nav_growth_q3, label: "三季度净值增长率", value: 4.37, unit: "%", asOf: "2026-09-30"}}
                  - {{key: equity_weight, label: "股票仓位", value: 88.5, unit: "%", asOf: "2026-09-30"}}
    agents:
      - key: researcher
        versions:
          - version: "1"
            status: PUBLISHED
            model: {{provider: extractive}}
            allowedKnowledge: ["filings@2026-10"]
    apps:
      - slug: chenghu-desk
        name: "澄湖研究台"
        members:
          - {{user: pm, history: true}}
        leases:
          - {{knowledge: "filings@2026-10", expiresAt: null}}
        agents: {{researcher: "1"}}
"""


def write_chenghu(directory: Path) -> Path:
    word = write_chenghu_docx(directory / "chenghu-electronics-2025.docx")
    markdown = directory / "lingfeng-bio-2026q3.md"
    markdown.write_text(LINGFENG_MARKDOWN, encoding="utf-8")
    manifest = directory / "chenghu_manifest.yaml"
    manifest.write_text(
        CHENGHU_MANIFEST.format(
            docx=word.name, markdown=markdown.name, fund=_indent(CHENGHU_FUND_PAGE, 20)
        ),
        encoding="utf-8",
    )
    return manifest


WRITERS = {
    "coldchain": write_coldchain,
    "chenghu": write_chenghu,
    "harbor": write_harbor,
    "ledger": write_ledger,
    "quarry": write_quarry,
}

# The fixture of each evaluation set of tests/answers/sets/ (NAME.yaml and NAME_heldout.yaml):
# a manifest, or ``file:`` one written here; the app asked in and the user who asks.
SET_FIXTURES: dict[str, tuple[str, str, str]] = {
    "demo": ("demo/manifest.yaml", "research-desk", "analyst"),
    "pine": ("tests/answers/second_manifest.yaml", "pine-desk", "reader"),
    "coldchain": ("file:coldchain", "cold-desk", "yc-analyst"),
    "chenghu": ("file:chenghu", "chenghu-desk", "pm"),
    # A second set over each fixture, written later by another hand (NAME_b.yaml and
    # NAME_b_heldout.yaml): the same documents, asked in other words.
    "demo_b": ("demo/manifest.yaml", "research-desk", "analyst"),
    "pine_b": ("tests/answers/second_manifest.yaml", "pine-desk", "reader"),
    "coldchain_b": ("file:coldchain", "cold-desk", "yc-analyst"),
    "chenghu_b": ("file:chenghu", "chenghu-desk", "pm"),
    # A fifth fixture and its set, both written by another hand before any reader change
    # (tests/answers/harbor_fixture.py).
    "harbor": ("file:harbor", "harbor-desk", "hb-analyst"),
    # A sixth, likewise (tests/answers/ledger_fixture.py).
    "ledger": ("file:ledger", "ledger-desk", "ld-analyst"),
    # A seventh, likewise (tests/answers/quarry_fixture.py).
    "quarry": ("file:quarry", "quarry-desk", "qy-analyst"),
    # A fourth hand's sets (NAME_d.yaml and NAME_d_heldout.yaml) over the third hand's
    # fixtures, written from the documents alone, without the reader's rules.
    "harbor_d": ("file:harbor", "harbor-desk", "hb-analyst"),
    "ledger_d": ("file:ledger", "ledger-desk", "ld-analyst"),
    "quarry_d": ("file:quarry", "quarry-desk", "qy-analyst"),
    # A fifth hand's sets (NAME_e.yaml and NAME_e_heldout.yaml) over all seven fixtures,
    # likewise written from the documents alone, before any reader change made for them.
    "demo_e": ("demo/manifest.yaml", "research-desk", "analyst"),
    "pine_e": ("tests/answers/second_manifest.yaml", "pine-desk", "reader"),
    "coldchain_e": ("file:coldchain", "cold-desk", "yc-analyst"),
    "chenghu_e": ("file:chenghu", "chenghu-desk", "pm"),
    "harbor_e": ("file:harbor", "harbor-desk", "hb-analyst"),
    "ledger_e": ("file:ledger", "ledger-desk", "ld-analyst"),
    "quarry_e": ("file:quarry", "quarry-desk", "qy-analyst"),
    # A sixth hand's sets (NAME_f.yaml and NAME_f_heldout.yaml) over all seven fixtures,
    # likewise; measured before any reader change made for them. Kept as a measure of transfer
    # for one round; since the seventh hand's sets took that place, the tuned half tunes.
    "demo_f": ("demo/manifest.yaml", "research-desk", "analyst"),
    "pine_f": ("tests/answers/second_manifest.yaml", "pine-desk", "reader"),
    "coldchain_f": ("file:coldchain", "cold-desk", "yc-analyst"),
    "chenghu_f": ("file:chenghu", "chenghu-desk", "pm"),
    "harbor_f": ("file:harbor", "harbor-desk", "hb-analyst"),
    "ledger_f": ("file:ledger", "ledger-desk", "ld-analyst"),
    "quarry_f": ("file:quarry", "quarry-desk", "qy-analyst"),
    # A seventh hand's sets (NAME_g.yaml and NAME_g_heldout.yaml) over all seven fixtures,
    # likewise; measured before any reader change made after them, neither half used to
    # tune: they measure how the general rules transfer to questions nobody fixed them for.
    "demo_g": ("demo/manifest.yaml", "research-desk", "analyst"),
    "pine_g": ("tests/answers/second_manifest.yaml", "pine-desk", "reader"),
    "coldchain_g": ("file:coldchain", "cold-desk", "yc-analyst"),
    "chenghu_g": ("file:chenghu", "chenghu-desk", "pm"),
    "harbor_g": ("file:harbor", "harbor-desk", "hb-analyst"),
    "ledger_g": ("file:ledger", "ledger-desk", "ld-analyst"),
    "quarry_g": ("file:quarry", "quarry-desk", "qy-analyst"),
}


def write_fixture(name: str, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return WRITERS[name](directory)


def fixture_manifest(name: str, directory: Path) -> Path:
    """The manifest of evaluation set fixture ``name`` (written under ``directory`` when
    its documents are files)."""
    source = SET_FIXTURES[name][0]
    if source.startswith("file:"):
        writer = source.removeprefix("file:")
        return write_fixture(writer, directory / writer)
    return Path(__file__).resolve().parents[2] / source
