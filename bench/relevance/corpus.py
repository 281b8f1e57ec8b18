"""A labeled corpus of invented Chinese listed-company documents for the relevance bench.

``build_corpus()`` is deterministic (fixed seed, no clock, no I/O): the same documents,
pages and figures on every machine, so the hand-written queries of ``queries.json`` and
``queries_heldout.json`` can name the page that answers them. Changing how anything
here is generated (even the order of the random draws) changes figures the queries
expect; ``tests/knowledge/test_relevance_corpus.py`` then fails.

The corpus imitates what a tenant of SparkTide publishes as MANAGED knowledge:

* periodic reports of 28 companies for four periods (2025 年度报告, 2026 第一季度报告,
  2026 半年度报告, 2026 第三季度报告). Every page starts with a running header naming the
  company and the period; the same boilerplate paragraphs (重要提示, 公司治理, 风险) are on
  every company's pages; a company's reports of different periods share most of their
  text and differ in period words and figures;
* announcements: 向特定对象发行股票预案 (募集资金) and 董事会决议 (董事长, 总经理, 董事会秘书);
* broker notes (投资评级, 目标价, EPS forecasts), written with the report's vocabulary
  and its abbreviations (营收, 归母净利润, 2026H1) but without the reported levels, so
  they are distractors for questions about reported figures.

Each page is at most ``MAX_PAGE_UTF16`` UTF-16 units, so ``ingest_document`` makes one
chunk of each page and a hit maps back to exactly one (document key, page).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

SEED = 20260618
HERE = Path(__file__).resolve().parent
QUERY_FILES = {"tuning": HERE / "queries.json", "heldout": HERE / "queries_heldout.json"}
KINDS = ("abbreviation", "period_alias", "long_boilerplate", "compound_term", "plain")
# ingest_document's chunk target (knowledge.ingest.TARGET_CHUNK_UTF16): a page
# no longer than this is one chunk.
MAX_PAGE_UTF16 = 600

PERIODS = {
    # key: (label in the running header and title, kind of report)
    "2025fy": ("2025年年度报告", "annual"),
    "2026q1": ("2026年第一季度报告", "quarter"),
    "2026h1": ("2026年半年度报告", "half"),
    "2026q3": ("2026年第三季度报告", "quarter"),
}
# How much of the year each period's cumulative figures cover (annual = 2025).
_PERIOD_SHARE = {"2025fy": 1.0, "2026q1": 0.24, "2026h1": 0.49, "2026q3": 0.75}
_PERIOD_GROWTH = {"2025fy": 1.0, "2026q1": 1.04, "2026h1": 1.07, "2026q3": 1.10}


@dataclass(frozen=True)
class Metric:
    term: str  # the report's own compound term, e.g. 冷链仓储面积
    unit: str
    low: float
    high: float
    decimals: int = 1


@dataclass(frozen=True)
class Industry:
    key: str
    revenue: tuple[float, float]  # annual revenue range, 亿元
    margin: tuple[float, float]  # net margin range
    context: str  # the industry paragraph every company of it repeats
    metrics: tuple[Metric, ...]


INDUSTRIES = {
    "logistics": Industry(
        "logistics",
        (60, 260),
        (0.03, 0.08),
        "报告期内，国内社会物流总额保持增长，冷链、快运及供应链一体化服务需求持续释放，"
        "行业集中度进一步提升，头部企业依托网络规模与数字化能力扩大市场份额。",
        (
            Metric("冷链仓储面积", "万平方米", 40, 160),
            Metric("干线运输网络覆盖城市", "个", 120, 360, 0),
            Metric("常温仓储面积", "万平方米", 80, 300),
            Metric("自有运输车辆", "辆", 1800, 9000, 0),
            Metric("城市配送网点", "个", 600, 3000, 0),
        ),
    ),
    "bank": Industry(
        "bank",
        (90, 420),
        (0.28, 0.40),
        "报告期内，银行业持续加大对实体经济的信贷支持力度，贷款市场报价利率下行，"
        "息差承压，资产质量总体稳定，监管部门持续推进中小银行风险化解。",
        (
            Metric("净息差", "%", 1.40, 2.10, 2),
            Metric("不良贷款率", "%", 0.80, 1.60, 2),
            Metric("拨备覆盖率", "%", 180, 420, 2),
            Metric("资本充足率", "%", 12.5, 16.5, 2),
            Metric("客户存款总额", "亿元", 2500, 12000, 2),
        ),
    ),
    "pharma": Industry(
        "pharma",
        (30, 180),
        (0.08, 0.18),
        "报告期内，医药行业政策持续深化，药品集中带量采购常态化推进，医保谈判品种放量，"
        "创新药研发与国际化成为企业增长的主要驱动力。",
        (
            Metric("研发投入", "亿元", 2, 25, 2),
            Metric("在研管线项目", "项", 18, 80, 0),
            Metric("创新药销售收入", "亿元", 3, 60, 2),
            Metric("通过一致性评价品种", "个", 8, 60, 0),
        ),
    ),
    "energy": Industry(
        "energy",
        (80, 400),
        (0.04, 0.12),
        "报告期内，新能源产业链价格竞争激烈，上游原材料价格低位运行，海外市场需求增长，"
        "储能与电动化渗透率继续提高，行业进入结构调整与技术迭代阶段。",
        (
            Metric("储能系统出货量", "GWh", 5, 60),
            Metric("动力电池装机量", "GWh", 8, 90),
            Metric("光伏组件产能", "GW", 10, 80),
            Metric("海外收入占比", "%", 12, 55),
        ),
    ),
    "semi": Industry(
        "semi",
        (20, 120),
        (0.06, 0.20),
        "报告期内，全球半导体行业景气度逐步回升，人工智能与汽车电子需求带动先进制程与特色工艺"
        "产能扩张，国产化替代进程持续推进。",
        (
            Metric("晶圆月产能", "万片", 3, 30),
            Metric("产能利用率", "%", 70, 98),
            Metric("先进封装收入", "亿元", 2, 30, 2),
        ),
    ),
    "retail": Industry(
        "retail",
        (50, 300),
        (0.02, 0.06),
        "报告期内，社会消费品零售总额温和增长，即时零售与会员制仓储店等新业态发展迅速，"
        "线下门店加快调整改造，消费者更加注重质价比。",
        (
            Metric("门店总数", "家", 300, 2600, 0),
            Metric("付费会员人数", "万人", 50, 600),
            Metric("线上销售占比", "%", 15, 45),
            Metric("同店销售增长率", "%", -3, 8),
        ),
    ),
    "software": Industry(
        "software",
        (15, 90),
        (0.05, 0.16),
        "报告期内，企业数字化转型需求持续释放，云计算与人工智能大模型应用加速落地，"
        "行业客户预算趋于审慎，订阅制商业模式占比提升。",
        (
            Metric("云服务订阅收入", "亿元", 2, 30, 2),
            Metric("年度经常性收入", "亿元", 3, 40, 2),
            Metric("付费客户数", "家", 1200, 9000, 0),
        ),
    ),
    "machinery": Industry(
        "machinery",
        (40, 260),
        (0.05, 0.12),
        "报告期内，国内制造业投资保持韧性，设备更新政策带动需求回暖，工程机械与数控机床出口"
        "保持较快增长，行业竞争格局持续优化。",
        (
            Metric("在手订单金额", "亿元", 40, 300, 2),
            Metric("海外收入占比", "%", 15, 50),
            Metric("数控机床销量", "台", 2000, 12000, 0),
        ),
    ),
    "food": Industry(
        "food",
        (30, 200),
        (0.12, 0.35),
        "报告期内，白酒及食品饮料行业需求分化，高端产品动销平稳，渠道库存有序去化，"
        "企业加强数字化渠道建设与消费者培育。",
        (
            Metric("高端产品收入", "亿元", 8, 90, 2),
            Metric("经销商数量", "家", 800, 4500, 0),
            Metric("直销渠道收入占比", "%", 10, 40),
        ),
    ),
    "power": Industry(
        "power",
        (50, 300),
        (0.10, 0.22),
        "报告期内，全社会用电量稳步增长，新能源装机规模持续扩大，电力市场化交易比例提高，"
        "煤炭价格回落缓解火电企业成本压力。",
        (
            Metric("海上风电装机容量", "万千瓦", 60, 600),
            Metric("控股装机容量", "万千瓦", 800, 4000),
            Metric("上网电量", "亿千瓦时", 120, 900, 2),
            Metric("平均上网电价", "元/千瓦时", 0.32, 0.52, 3),
        ),
    ),
    "chemical": Industry(
        "chemical",
        (60, 320),
        (0.04, 0.12),
        "报告期内，化工行业产能集中释放，主要产品价格低位震荡，下游需求恢复缓慢，"
        "一体化与高端化企业盈利韧性较强。",
        (
            Metric("聚氨酯产能", "万吨/年", 40, 300),
            Metric("新材料产品销量", "万吨", 5, 60),
        ),
    ),
    "property": Industry(
        "property",
        (80, 500),
        (0.01, 0.06),
        "报告期内，房地产市场仍处于调整阶段，各地因城施策优化调控政策，行业销售规模同比下降，"
        "企业聚焦保交付与现金流安全。",
        (
            Metric("合同销售金额", "亿元", 80, 900, 2),
            Metric("土地储备建筑面积", "万平方米", 300, 2500),
        ),
    ),
    "auto": Industry(
        "auto",
        (150, 800),
        (0.02, 0.06),
        "报告期内，汽车行业价格竞争持续，新能源汽车渗透率突破半数，智能驾驶配置加速普及，"
        "整车出口保持增长。",
        (
            Metric("新能源汽车销量", "万辆", 10, 120),
            Metric("整车出口量", "万辆", 2, 40),
        ),
    ),
    "datacenter": Industry(
        "datacenter",
        (15, 80),
        (0.06, 0.15),
        "报告期内，人工智能训练与推理带动算力需求快速增长，数据中心向高功率密度与液冷演进，"
        "东数西算工程持续推进。",
        (
            Metric("算力中心机架数", "个", 8000, 60000, 0),
            Metric("机架上架率", "%", 60, 95),
        ),
    ),
}


@dataclass(frozen=True)
class Company:
    code: str
    short: str  # 股票简称
    full: str  # the registered name in every running header
    industry: str
    exchange: str
    holder: str  # controlling shareholder
    metrics: tuple[int, ...] = ()  # which of its industry's metrics it discloses


# 28 invented companies. Some names share characters on purpose (海川物流 / 海川医药).
_COMPANIES = [
    ("603871", "海川物流", "海川冷链物流股份有限公司", "logistics", (0, 1, 4)),
    ("002918", "远达物流", "远达供应链管理股份有限公司", "logistics", (2, 3, 4)),
    ("301256", "顺程快运", "顺程快运股份有限公司", "logistics", (1, 3)),
    ("601528", "江海银行", "江海农村商业银行股份有限公司", "bank", (0, 1, 2, 3, 4)),
    ("600926", "华信银行", "华信银行股份有限公司", "bank", (0, 1, 2, 3, 4)),
    ("002936", "汇通银行", "汇通银行股份有限公司", "bank", (0, 1, 2, 3, 4)),
    ("600783", "海川医药", "海川医药集团股份有限公司", "pharma", (0, 1, 3)),
    ("688315", "康瑞生物", "康瑞生物科技股份有限公司", "pharma", (0, 1, 2)),
    ("002437", "济安药业", "济安药业股份有限公司", "pharma", (0, 3)),
    ("300842", "星河能源", "星河新能源科技股份有限公司", "energy", (0, 3)),
    ("688567", "蓝峰电池", "蓝峰电池股份有限公司", "energy", (1, 0)),
    ("601865", "晨光光伏", "晨光光伏科技股份有限公司", "energy", (2, 3)),
    ("688452", "芯源微电", "芯源微电子股份有限公司", "semi", (0, 1)),
    ("603290", "华晶半导体", "华晶半导体股份有限公司", "semi", (0, 1, 2)),
    ("002891", "优品零售", "优品零售连锁股份有限公司", "retail", (0, 1, 3)),
    ("603708", "鲜丰超市", "鲜丰超市股份有限公司", "retail", (0, 2, 3)),
    ("300955", "云启科技", "云启科技股份有限公司", "software", (0, 1, 2)),
    ("688176", "数联软件", "数联软件股份有限公司", "software", (0, 2)),
    ("600885", "恒力重工", "恒力重工机械股份有限公司", "machinery", (0, 1)),
    ("300612", "精锐机床", "精锐数控机床股份有限公司", "machinery", (0, 2)),
    ("600579", "金禾酒业", "金禾酒业股份有限公司", "food", (0, 1, 2)),
    ("002703", "鲜味食品", "鲜味食品股份有限公司", "food", (1, 2)),
    ("600905", "东海电力", "东海新能源电力股份有限公司", "power", (0, 1, 2, 3)),
    ("601619", "清源电力", "清源电力股份有限公司", "power", (1, 2, 3)),
    ("002648", "丰泽化工", "丰泽化工股份有限公司", "chemical", (0, 1)),
    ("000735", "安居置业", "安居置业股份有限公司", "property", (0, 1)),
    ("601877", "驰远汽车", "驰远汽车股份有限公司", "auto", (0, 1)),
    ("300788", "云海数据", "云海数据科技股份有限公司", "datacenter", (0, 1)),
]
# Which companies announce a placement (向特定对象发行) and a board resolution, and which
# periods brokers review: fixed lists, so the queries can rely on them.
PLACEMENTS = (
    "603871",
    "601528",
    "688315",
    "300842",
    "688567",
    "688452",
    "002891",
    "300955",
    "600885",
    "600905",
    "002648",
    "300788",
)
BOARD_RESOLUTIONS = (
    "603871",
    "002918",
    "600926",
    "600783",
    "002437",
    "601865",
    "603290",
    "603708",
    "688176",
    "300612",
    "600579",
    "002703",
    "601619",
    "601877",
)
BROKERS = ("东岳证券", "中诚证券", "天衡证券", "鼎盛证券", "瑞丰证券")
NOTE_PERIODS = {
    "603871": ("2025fy", "2026h1"),
    "601528": ("2026h1", "2026q3"),
    "600926": ("2025fy", "2026q1"),
    "600783": ("2026h1", "2026q3"),
    "688315": ("2025fy", "2026h1"),
    "300842": ("2026q1", "2026h1"),
    "688567": ("2025fy", "2026q3"),
    "688452": ("2026h1", "2026q3"),
    "002891": ("2025fy", "2026h1"),
    "300955": ("2026q1", "2026q3"),
    "600885": ("2025fy", "2026h1"),
    "600579": ("2026h1", "2026q3"),
    "600905": ("2025fy", "2026h1"),
    "601877": ("2026q1", "2026h1"),
    "300788": ("2025fy", "2026q3"),
}
_EXCHANGE = {"6": "上海证券交易所", "0": "深圳证券交易所", "3": "深圳证券交易所"}
_HOLDER_SUFFIX = ("控股集团有限公司", "投资控股有限公司", "集团有限公司")
_OTHER_HOLDERS = (
    "香港中央结算有限公司",
    "全国社会保障基金一一八组合",
    "中国工商银行股份有限公司－易方达蓝筹精选混合型证券投资基金",
    "基本养老保险基金一二零二组合",
    "招商银行股份有限公司－兴全合润混合型证券投资基金",
)
_SURNAMES = "王李张刘陈杨黄赵周吴徐孙马朱胡郭何林罗高郑梁谢宋唐许韩冯邓曹彭曾萧田董潘袁蔡蒋余于杜叶程魏苏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
_GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉萍红建国志文辉鹏斌宇浩凯晨曦哲睿博远航毅俊峰岚"

# Shared boilerplate, word for word as reports repeat it.
_IMPORTANT = (
    "本公司董事会、监事会及董事、监事、高级管理人员保证{doc}内容的真实性、准确性、完整性，"
    "不存在虚假记载、误导性陈述或重大遗漏，并承担个别和连带的法律责任。"
)
_RESPONSIBLE = (
    "公司负责人{chair}、主管会计工作负责人{cfo}及会计机构负责人（会计主管人员）{acct}"
    "保证{doc}中财务信息的真实、准确、完整。"
)
_AUDITED = "{auditor}会计师事务所（特殊普通合伙）为本公司出具了标准无保留意见的审计报告。"
_NOT_AUDITED = "{doc}中的财务报表未经审计。"
_GOVERNANCE = (
    "报告期内，公司严格按照《公司法》《证券法》《上市公司治理准则》等法律法规和中国证监会、"
    "证券交易所的相关规定，不断完善公司法人治理结构，建立健全内部控制制度，规范公司运作，"
    "提高公司治理水平。报告期内公司主营业务、经营模式未发生重大变化。"
)
_RISKS = (
    "可能面对的风险：宏观经济波动风险，若国内外经济增速放缓，下游需求可能不及预期；"
    "行业竞争加剧风险，公司可能面临产品价格下降、市场份额被挤压的压力；"
    "原材料价格波动风险及汇率波动风险。公司将密切关注市场变化，积极采取应对措施。"
)
_RELATED = (
    "报告期内，公司不存在控股股东及其他关联方非经营性占用资金情况，不存在违规担保情况，"
    "不存在重大诉讼、仲裁事项。公司及其控股股东、实际控制人诚信状况良好。"
)
_FORWARD = (
    "本报告所涉及的未来计划、发展战略等前瞻性陈述，不构成公司对投资者的实质承诺，"
    "敬请投资者注意投资风险。"
)
_ANNOUNCE = (
    "本公司董事会及全体董事保证本公告内容不存在任何虚假记载、误导性陈述或者重大遗漏，"
    "并对其内容的真实性、准确性和完整性承担法律责任。"
)
_NOTE_RISK = (
    "风险提示：宏观经济增速不及预期；行业竞争加剧导致盈利能力下滑；原材料价格大幅波动；"
    "新业务拓展不及预期；政策变化风险。"
)
_DISCLAIMER = (
    "免责声明：本报告仅供本公司客户使用，本公司不会因接收人收到本报告而视其为客户。"
    "本报告基于已公开的资料或信息撰写，本公司力求但不保证该信息的准确性和完整性。"
    "本报告所载的意见、评估及预测仅为本报告出具日的观点和判断，在不同时期可能发生变化。"
    "投资者应当充分考虑自身特定状况，不应单纯依靠本报告所载的内容而取代个人的独立判断。"
    "市场有风险，投资需谨慎。"
)


@dataclass(frozen=True)
class CorpusDocument:
    key: str
    title: str
    kind: str  # report | placement | board | note
    company: str  # stock code
    period: str  # a PERIODS key, or "" for announcements
    pages: tuple[str, ...] = field(repr=False)


def _money(value: float) -> str:
    """万元 with thousands separators, as reports print them."""
    return f"{value:,.2f}"


def _fmt(value: float, decimals: int) -> str:
    return f"{value:,.{decimals}f}" if decimals else f"{round(value):,}"


def _pct(value: float) -> str:
    return f"{value:.2f}"


class _Names:
    def __init__(self, rng: random.Random) -> None:
        self.rng, self.used = rng, set()

    def __call__(self) -> str:
        while True:
            name = self.rng.choice(_SURNAMES) + "".join(
                self.rng.choice(_GIVEN) for _ in range(self.rng.choice((1, 2, 2)))
            )
            if name not in self.used:
                self.used.add(name)
                return name


@dataclass
class _People:
    chair: str
    cfo: str
    acct: str
    secretary: str
    new_chair: str
    new_ceo: str
    new_vps: tuple[str, str]
    new_cfo: str
    new_secretary: str
    presiding: str


@dataclass
class _Figures:
    revenue: float  # 万元, cumulative for the period
    revenue_prior: float
    profit: float
    profit_prior: float
    deducted: float
    cash: float
    eps: float
    roe: float
    roe_delta: float
    holders: int
    holders_month: int
    quarter_revenue: float = 0.0  # Q3 report: the third quarter alone
    quarter_profit: float = 0.0
    quarters: tuple[float, ...] = ()  # annual report: revenue of each quarter
    dividend: float = 0.0
    metrics: dict[str, str] = field(default_factory=dict)


def _figures(rng: random.Random, company: Company, base: dict, period: str) -> _Figures:
    industry = INDUSTRIES[company.industry]
    share, growth = _PERIOD_SHARE[period], _PERIOD_GROWTH[period]
    revenue = base["revenue"] * share * growth * rng.uniform(0.97, 1.03)
    yoy = rng.uniform(-0.08, 0.25)
    profit = revenue * base["margin"] * rng.uniform(0.9, 1.1)
    figures = _Figures(
        revenue=revenue,
        revenue_prior=revenue / (1 + yoy),
        profit=profit,
        profit_prior=profit / (1 + rng.uniform(-0.15, 0.30)),
        deducted=profit * rng.uniform(0.86, 0.98),
        cash=revenue * rng.uniform(-0.05, 0.18),
        eps=round(profit / base["shares"], 2) or 0.01,
        roe=round(profit / base["equity"] * 100, 2),
        roe_delta=round(rng.uniform(-1.5, 1.5), 2),
        holders=int(base["holders"] * rng.uniform(0.9, 1.12)),
        holders_month=int(base["holders"] * rng.uniform(0.9, 1.12)),
    )
    if period == "2026q3":
        figures.quarter_revenue = revenue * rng.uniform(0.33, 0.36)
        figures.quarter_profit = profit * rng.uniform(0.30, 0.38)
    if period == "2025fy":
        weights = [rng.uniform(0.22, 0.28) for _ in range(4)]
        figures.quarters = tuple(revenue * w / sum(weights) for w in weights)
        figures.dividend = round(figures.eps * rng.uniform(2.5, 4.0), 2)  # per 10 shares
    for index in company.metrics:
        metric = industry.metrics[index]
        level = base["metrics"][metric.term] * (1 + (growth - 1) * rng.uniform(0.5, 1.5))
        figures.metrics[metric.term] = _fmt(level, metric.decimals)
    return figures


def _header(company: Company, period: str) -> str:
    return f"{company.full}{PERIODS[period][0]}"


def _report_pages(company: Company, period: str, people: _People, f: _Figures) -> list[str]:
    label, report_kind = PERIODS[period]
    doc = "年度报告" if report_kind == "annual" else "本报告"
    head = _header(company, period)
    audited = (
        _AUDITED.format(auditor=company.short[:2] + "信永")
        if report_kind == "annual"
        else _NOT_AUDITED.format(doc=doc)
    )
    cover = [
        head,
        "重要提示\n"
        + _IMPORTANT.format(doc=doc)
        + "\n"
        + _RESPONSIBLE.format(chair=people.chair, cfo=people.cfo, acct=people.acct, doc=doc)
        + "\n"
        + audited,
        f"公司简介\n股票简称：{company.short}　股票代码：{company.code}　"
        f"股票上市交易所：{company.exchange}\n董事会秘书：{people.secretary}",
    ]
    if period == "2026q3":
        span = (
            f"第三季度（本报告期）营业收入（万元）：{_money(f.quarter_revenue)}；"
            f"归属于上市公司股东的净利润（万元）：{_money(f.quarter_profit)}。\n"
            "以下为年初至报告期末数据："
        )
    elif report_kind == "annual":
        span = "2025年（本报告期）与2024年（上年同期）对比："
    else:
        span = "本报告期与上年同期对比："
    data = [
        head,
        "主要会计数据和财务指标\n" + span,
        f"营业收入（万元）：{_money(f.revenue)}，上年同期{_money(f.revenue_prior)}，"
        f"同比增减{_pct((f.revenue / f.revenue_prior - 1) * 100)}%\n"
        f"归属于上市公司股东的净利润（万元）：{_money(f.profit)}，上年同期{_money(f.profit_prior)}\n"
        f"归属于上市公司股东的扣除非经常性损益的净利润（万元）：{_money(f.deducted)}\n"
        f"经营活动产生的现金流量净额（万元）：{_money(f.cash)}\n"
        f"基本每股收益（元/股）：{f.eps:.2f}；稀释每股收益（元/股）：{f.eps:.2f}\n"
        f"加权平均净资产收益率（%）：{f.roe:.2f}，"
        f"比上年同期{'增加' if f.roe_delta >= 0 else '减少'}{abs(f.roe_delta):.2f}个百分点",
    ]
    others = "；".join(
        f"{holder}，持股比例{share}%"
        for holder, share in zip(_OTHER_HOLDERS[:3], ("3.61", "1.37", "0.96"), strict=True)
    )
    holders = [
        head,
        "股东信息\n"
        f"报告期末普通股股东总数（户）：{f.holders:,}"
        + (
            f"\n年度报告披露日前上一月末普通股股东总数（户）：{f.holders_month:,}"
            if report_kind == "annual"
            else ""
        ),
        f"前十名股东持股情况：{company.holder}，持股比例38.52%；{others}。"
        "上述股东中，控股股东与其他股东之间不存在关联关系，也不属于一致行动人。",
    ]
    industry = INDUSTRIES[company.industry]
    metric_lines = "；".join(
        f"{term}{value}{_unit(industry, term)}" for term, value in f.metrics.items()
    )
    operations = [
        head,
        "经营情况讨论与分析\n" + industry.context,
        f"报告期内，公司坚持主业发展战略，经营业绩稳中有进。截至报告期末，{metric_lines}。",
    ]
    if report_kind == "quarter":
        return ["\n\n".join(p) for p in (cover, data, holders, operations)]
    matters = [head, "重要事项\n" + _GOVERNANCE, _RISKS, _RELATED]
    pages = [cover, data, holders, operations, matters]
    if report_kind == "annual":
        quarters = [
            head,
            "分季度主要财务数据（万元）\n"
            + "；".join(
                f"{name}营业收入{_money(value)}"
                for name, value in zip(
                    ("第一季度", "第二季度", "第三季度", "第四季度"), f.quarters, strict=True
                )
            ),
            "上述财务指标或其加总数与公司已披露季度报告、半年度报告相关财务指标不存在重大差异。",
        ]
        dividend = [
            head,
            "利润分配预案\n经董事会审议通过的利润分配预案为：公司拟以实施权益分派股权登记日"
            f"登记的总股本为基数，向全体股东每10股派发现金红利{f.dividend:.2f}元（含税），"
            "不送红股，不以资本公积金转增股本。",
            "本预案尚需提交公司2025年年度股东大会审议。" + _FORWARD,
        ]
        pages = [cover, data, quarters, holders, operations, matters, dividend]
    return ["\n\n".join(p) for p in pages]


def _unit(industry: Industry, term: str) -> str:
    return next(m.unit for m in industry.metrics if m.term == term)


def _placement_pages(rng: random.Random, company: Company, projects: tuple[str, str]) -> list[str]:
    head = f"{company.full}关于2026年度向特定对象发行A股股票预案披露的提示性公告"
    amount = round(rng.uniform(8, 60), 2)
    first = round(amount * rng.uniform(0.55, 0.75), 2)
    return [
        "\n\n".join(
            [
                head,
                f"证券代码：{company.code}　证券简称：{company.short}\n" + _ANNOUNCE,
                "本次发行的发行对象为不超过35名（含35名）符合中国证监会规定条件的特定投资者，"
                "发行数量不超过本次发行前公司总股本的30%，发行价格不低于定价基准日前二十个交易日"
                "公司股票交易均价的80%。",
            ]
        ),
        "\n\n".join(
            [
                head,
                f"本次向特定对象发行股票募集资金总额不超过人民币{amount:.2f}亿元（含本数），"
                "扣除发行费用后的募集资金净额将全部用于以下项目：",
                f"1. {projects[0]}，拟投入募集资金{first:.2f}亿元；"
                f"2. {projects[1]}，拟投入募集资金{amount - first:.2f}亿元。",
            ]
        ),
        "\n\n".join(
            [
                head,
                "本次发行尚需经证券交易所审核通过并经中国证监会同意注册后方可实施，能否取得"
                "审核通过与注册批复，以及最终取得的时间存在不确定性，敬请广大投资者注意投资风险。",
                "本次发行完成后，公司股本总额及净资产规模将有所增加，短期内即期回报存在被摊薄的风险。",
            ]
        ),
    ]


_PROJECTS = {
    "logistics": ("智慧冷链物流园区建设项目", "补充流动资金"),
    "bank": ("补充核心一级资本", "数字化转型升级项目"),
    "pharma": ("创新药研发中心建设项目", "补充流动资金"),
    "energy": ("年产20GWh储能电池生产基地项目", "补充流动资金"),
    "semi": ("12英寸特色工艺晶圆生产线项目", "补充流动资金"),
    "retail": ("生鲜供应链及门店升级改造项目", "补充流动资金"),
    "software": ("行业大模型平台研发项目", "补充流动资金"),
    "machinery": ("高端数控装备智能制造基地项目", "补充流动资金"),
    "power": ("海上风电场建设项目", "偿还银行贷款"),
    "chemical": ("高性能新材料一体化项目", "补充流动资金"),
    "datacenter": ("智算中心建设项目", "补充流动资金"),
}


def _board_pages(company: Company, people: _People, session: int) -> list[str]:
    head = f"{company.full}第{'六七八九'[session % 4]}届董事会第一次会议决议公告"
    return [
        "\n\n".join(
            [
                head,
                f"证券代码：{company.code}　证券简称：{company.short}\n" + _ANNOUNCE,
                "一、董事会会议召开情况\n本次董事会会议通知于会议召开前以电子邮件方式送达全体董事，"
                f"会议以现场结合通讯方式召开，应出席董事9名，实际出席董事9名，会议由全体董事"
                f"共同推举的董事{people.presiding}主持，公司监事和高级管理人员列席会议。会议的召集、"
                "召开和表决程序符合《公司法》和《公司章程》的规定。",
            ]
        ),
        "\n\n".join(
            [
                head,
                "二、董事会会议审议情况\n（一）审议通过《关于选举公司董事长的议案》\n"
                f"同意选举{people.new_chair}为公司第{'六七八九'[session % 4]}届董事会董事长，"
                "任期自本次董事会审议通过之日起至本届董事会届满之日止。\n表决结果：同意9票，反对0票，弃权0票。",
                "（二）审议通过《关于聘任公司总经理的议案》\n"
                f"同意聘任{people.new_ceo}为公司总经理，任期与本届董事会一致。本议案已经董事会提名"
                "委员会审议通过。\n表决结果：同意9票，反对0票，弃权0票。",
            ]
        ),
        "\n\n".join(
            [
                head,
                "（三）审议通过《关于聘任公司副总经理、财务总监的议案》\n"
                f"同意聘任{people.new_vps[0]}、{people.new_vps[1]}为公司副总经理，"
                f"聘任{people.new_cfo}为公司财务总监。\n表决结果：同意9票，反对0票，弃权0票。",
                "（四）审议通过《关于聘任公司董事会秘书的议案》\n"
                f"同意聘任{people.new_secretary}为公司董事会秘书，其已取得证券交易所颁发的董事会秘书"
                "资格证书。\n表决结果：同意9票，反对0票，弃权0票。",
                "上述人员均不存在《公司法》规定不得担任公司高级管理人员的情形，未受过中国证监会"
                "及其他有关部门的处罚和证券交易所惩戒。",
            ]
        ),
    ]


_RATINGS = ("买入", "增持", "推荐", "买入", "增持")
_NOTE_PERIOD_WORDS = {
    # (what the title calls the report, what the text calls the period)
    "2025fy": ("2025年年报点评", "2025年"),
    "2026q1": ("2026年一季报点评", "2026Q1"),
    "2026h1": ("2026年中报点评", "2026H1"),
    "2026q3": ("2026年三季报点评", "2026Q1-Q3"),
}
_HALF_TITLE_VARIANT = "2026年半年报点评"


def _note(
    rng: random.Random,
    company: Company,
    period: str,
    broker: str,
    f: _Figures,
    base: dict,
) -> CorpusDocument:
    title_words, text_period = _NOTE_PERIOD_WORDS[period]
    if period == "2026h1" and int(company.code) % 2:
        title_words = _HALF_TITLE_VARIANT
    rating = _RATINGS[int(company.code) % len(_RATINGS)]
    highlight = "、".join(f"{term}稳步提升" for term in list(f.metrics)[:2])
    headline = f"{broker}：{company.short}（{company.code}）{title_words}：业绩稳健增长，维持“{rating}”评级"
    growth = (f.revenue / f.revenue_prior - 1) * 100
    year_eps = base["profit_year"] / base["shares"]
    eps = [year_eps * rng.uniform(1.05, 1.15), 0.0, 0.0]
    eps[1] = eps[0] * rng.uniform(1.10, 1.25)
    eps[2] = eps[1] * rng.uniform(1.10, 1.25)
    pe = rng.uniform(12, 35)
    target = eps[0] * pe
    pages = [
        "\n\n".join(
            [
                headline,
                f"事件：公司发布{PERIODS[period][0]}。{text_period}公司实现营收同比"
                f"{'增长' if growth >= 0 else '下降'}{abs(growth):.1f}%，归母净利润同比"
                f"{'增长' if f.profit >= f.profit_prior else '下降'}"
                f"{abs(f.profit / f.profit_prior - 1) * 100:.1f}%，扣非归母净利润同比变动与"
                "归母净利润基本一致，业绩符合市场预期。",
                f"经营亮点：{highlight}，主业竞争力持续增强；费用率稳中有降，经营性现金流表现良好。",
            ]
        ),
        "\n\n".join(
            [
                headline,
                "盈利预测与投资建议：我们预计公司2026-2028年EPS分别为"
                f"{eps[0]:.2f}/{eps[1]:.2f}/{eps[2]:.2f}元，对应当前股价PE分别为"
                f"{pe:.1f}/{pe / 1.17:.1f}/{pe / 1.36:.1f}倍。",
                f"参考可比公司估值，给予公司2026年{pe:.0f}倍PE，目标价{target:.2f}元，"
                f"维持“{rating}”评级。",
            ]
        ),
        "\n\n".join([headline, _NOTE_RISK, _DISCLAIMER]),
    ]
    return CorpusDocument(
        key=f"{company.code}-note-{period}",
        title=headline,
        kind="note",
        company=company.code,
        period=period,
        pages=tuple(pages),
    )


@cache
def build_corpus(seed: int = SEED) -> tuple[CorpusDocument, ...]:
    """Every document of the corpus, in a fixed order (reports, announcements, notes)."""
    rng = random.Random(seed)
    names = _Names(rng)
    companies = []
    for code, short, full, industry, metrics in _COMPANIES:
        holder = full[:2] + rng.choice(_HOLDER_SUFFIX)
        companies.append(
            Company(code, short, full, industry, _EXCHANGE[code[0]], holder, metrics=metrics)
        )
    documents: list[CorpusDocument] = []
    figures: dict[tuple[str, str], _Figures] = {}
    bases, people = {}, {}
    for company in companies:
        industry = INDUSTRIES[company.industry]
        revenue = rng.uniform(*industry.revenue) * 10_000  # 万元
        margin = rng.uniform(*industry.margin)
        base = {
            "revenue": revenue,
            "margin": margin,
            "profit_year": revenue * margin,
            "shares": revenue * margin / rng.uniform(0.2, 2.5),  # 万股: EPS 0.2–2.5 a year
            "equity": revenue * margin / rng.uniform(0.05, 0.16),  # ROE 5–16% a year
            "holders": rng.randint(18_000, 160_000),
            "metrics": {
                industry.metrics[i].term: rng.uniform(
                    industry.metrics[i].low, industry.metrics[i].high
                )
                for i in company.metrics
            },
        }
        bases[company.code] = base
        people[company.code] = _People(
            chair=names(),
            cfo=names(),
            acct=names(),
            secretary=names(),
            new_chair=names(),
            new_ceo=names(),
            new_vps=(names(), names()),
            new_cfo=names(),
            new_secretary=names(),
            presiding=names(),
        )
        for period, (label, _) in PERIODS.items():
            f = _figures(rng, company, base, period)
            figures[company.code, period] = f
            documents.append(
                CorpusDocument(
                    key=f"{company.code}-{period}",
                    title=f"{company.short}：{company.full}{label}",
                    kind="report",
                    company=company.code,
                    period=period,
                    pages=tuple(_report_pages(company, period, people[company.code], f)),
                )
            )
    by_code = {c.code: c for c in companies}
    for code in PLACEMENTS:
        company = by_code[code]
        pages = _placement_pages(rng, company, _PROJECTS[company.industry])
        documents.append(
            CorpusDocument(
                key=f"{code}-placement",
                title=f"{company.short}：关于2026年度向特定对象发行A股股票预案披露的提示性公告",
                kind="placement",
                company=code,
                period="",
                pages=tuple(pages),
            )
        )
    for session, code in enumerate(BOARD_RESOLUTIONS):
        company = by_code[code]
        pages = _board_pages(company, people[code], session)
        documents.append(
            CorpusDocument(
                key=f"{code}-board",
                title=f"{company.short}：{pages[0].split(chr(10))[0].removeprefix(company.full)}",
                kind="board",
                company=code,
                period="",
                pages=tuple(pages),
            )
        )
    for n, (code, periods) in enumerate(NOTE_PERIODS.items()):
        for i, period in enumerate(periods):
            broker = BROKERS[(n + i) % len(BROKERS)]
            documents.append(
                _note(rng, by_code[code], period, broker, figures[code, period], bases[code])
            )
    return tuple(documents)


def companies() -> dict[str, tuple[str, str]]:
    """Stock code → (简称, full name)."""
    return {code: (short, full) for code, short, full, *_ in _COMPANIES}


def documents_by_key() -> dict[str, CorpusDocument]:
    return {d.key: d for d in build_corpus()}


def load_queries(which: str) -> list[dict]:
    """The hand-written queries of one file ("tuning" or "heldout"), in file order."""
    return json.loads(QUERY_FILES[which].read_text(encoding="utf-8"))["queries"]


def query_problems(query: dict, documents: dict[str, CorpusDocument]) -> list[str]:
    """Why a query's expectation is not honest, or [] — the checks the test and the
    bench share: the expected page exists, states every answer string, and among the
    documents of the same company it is the only page that states them all."""
    problems = []
    missing = {"id", "kind", "query", "expect", "answer"} - set(query)
    if missing:
        return [f"{query.get('id')}: missing {sorted(missing)}"]
    qid, expect = query["id"], query["expect"]
    if query["kind"] not in KINDS:
        problems.append(f"{qid}: unknown kind {query['kind']!r}")
    if not query["query"].strip():
        problems.append(f"{qid}: empty query")
    answer = query["answer"]
    if (
        not isinstance(answer, list)
        or not answer
        or not all(isinstance(a, str) and a for a in answer)
    ):
        return [*problems, f"{qid}: answer must be a non-empty list of strings"]
    document = documents.get(expect.get("document"))
    if document is None:
        return [*problems, f"{qid}: no document {expect.get('document')!r}"]
    page = expect.get("page")
    if not isinstance(page, int) or not 1 <= page <= len(document.pages):
        return [*problems, f"{qid}: {document.key} has no page {page!r}"]
    text = document.pages[page - 1]
    absent = [a for a in answer if a not in text]
    if absent:
        problems.append(f"{qid}: {document.key} p{page} does not state {absent}")
    also = [
        f"{other.key} p{number}"
        for other in documents.values()
        if other.company == document.company
        for number, other_text in enumerate(other.pages, 1)
        if (other.key, number) != (document.key, page) and all(a in other_text for a in answer)
    ]
    if also:
        problems.append(f"{qid}: the answer {answer} is also on {', '.join(also)}")
    return problems


if __name__ == "__main__":
    import sys

    # Print the corpus (or the documents whose key starts with an argument) for reading.
    wanted = sys.argv[1:]
    for document in build_corpus():
        if wanted and not any(document.key.startswith(w) for w in wanted):
            continue
        print(f"=== {document.key} | {document.title}")
        for number, text in enumerate(document.pages, 1):
            print(f"--- p{number} ({len(text)} chars)\n{text}")
