"""The domain vocabulary: what an analyst may call a thing, and what the filings call it.

One home for synonyms, abbreviations, period aliases and entity aliases. Retrieval
expands a query with it; the extractive reader may use the same API.

A vocabulary is a directed mapping ``term -> expansions``: a term found in a query
also searches its expansions, transitively (EPS → 每股收益 → 基本每股收益). A cycle
(A → B → A, or A → A) is refused: an equivalence is written once, from the word an
analyst types to the words a filing prints. Terms are matched case-insensitively
after NFKC folding; an ASCII term matches only where no letter touches it (``q3`` is
found in ``26Q3``, ``eps`` is not found in ``steps``).

API (all pure, no database):

- ``BUILTIN`` — the built-in financial vocabulary (a ``Vocabulary``).
- ``Vocabulary.merge(other)`` — a new vocabulary with ``other``'s entries added.
- ``Vocabulary.expand(term) -> frozenset[str]`` — every term ``term`` expands to,
  transitively, itself excluded; empty for an unknown term.
- ``Vocabulary.segment(text) -> list[str]`` — the vocabulary's terms found in
  ``text``, longest first where they overlap, in text order.
- ``Vocabulary.topic_terms(question) -> list[Expansion]`` — each term of the question
  with its expansions: what retrieval searches beyond the question's own words.
- ``validate_entries(entries) -> Vocabulary`` — parse operator input
  (``{term: [expansion, …]}``); raises ``VocabularyError`` for an empty term, a term
  over ``MAX_TERM_CHARS``, more than ``MAX_EXPANSIONS``, or a cycle.
- ``entity_aliases(titles) -> Vocabulary`` — short name ↔ full name ↔ stock code, from
  documents' titles as filings and broker notes write them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# A term is a word or a short phrase; a 1 MB "term" is an error, not a phrase.
MAX_TERM_CHARS = 64
MAX_EXPANSIONS = 32
MAX_ENTRIES = 5_000


class VocabularyError(ValueError):
    """Operator input that is not a vocabulary; ``path`` names the entry (``EPS[2]``)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip()


@dataclass(frozen=True)
class Expansion:
    term: str  # as found in the question (folded)
    expansions: tuple[str, ...]  # what it also searches, sorted


class Vocabulary:
    def __init__(self, entries: Mapping[str, Iterable[str]] | None = None) -> None:
        self._edges: dict[str, set[str]] = {}
        for term, expansions in (entries or {}).items():
            self._edges.setdefault(fold(term), set()).update(fold(e) for e in expansions)
        self._closure: dict[str, frozenset[str]] = {}
        self._pattern: re.Pattern[str] | None = None

    def __len__(self) -> int:
        return len(self._edges)

    def entries(self) -> dict[str, list[str]]:
        return {term: sorted(targets) for term, targets in sorted(self._edges.items())}

    def merge(self, other: Vocabulary) -> Vocabulary:
        merged = Vocabulary(self.entries())
        for term, expansions in other.entries().items():
            merged._edges.setdefault(term, set()).update(expansions)
        return merged

    def expand(self, term: str) -> frozenset[str]:
        term = fold(term)
        if term not in self._closure:
            seen: set[str] = set()
            stack = list(self._edges.get(term, ()))
            while stack:
                current = stack.pop()
                if current in seen or current == term:
                    continue
                seen.add(current)
                stack.extend(self._edges.get(current, ()))
            self._closure[term] = frozenset(seen)
        return self._closure[term]

    def segment(self, text: str) -> list[str]:
        if not self._edges:
            return []
        if self._pattern is None:
            alternatives = []
            for term in sorted(self._edges, key=lambda t: (-len(t), t)):
                body = re.escape(term)
                if term.isascii() and term[:1].isalpha():
                    body = rf"(?<![a-z]){body}"
                if term.isascii() and term[-1:].isalpha():
                    body = rf"{body}(?![a-z])"
                alternatives.append(body)
            self._pattern = re.compile("|".join(alternatives))
        return [m.group(0) for m in self._pattern.finditer(fold(text))]

    def topic_terms(self, question: str) -> list[Expansion]:
        found: dict[str, Expansion] = {}
        for term in self.segment(question):
            if term not in found:
                found[term] = Expansion(term, tuple(sorted(self.expand(term))))
        return list(found.values())


def validate_entries(entries: object, *, path: str = "") -> Vocabulary:
    """Operator input → Vocabulary, or VocabularyError naming the entry at fault."""
    if not isinstance(entries, dict):
        raise VocabularyError(path, "must be a mapping of term to a list of expansions")
    if len(entries) > MAX_ENTRIES:
        raise VocabularyError(path, f"at most {MAX_ENTRIES} terms")
    prefix = f"{path}." if path else ""
    checked: dict[str, list[str]] = {}
    for term, expansions in entries.items():
        where = f"{prefix}{term!s:.{MAX_TERM_CHARS}}"
        _check_term(term, where)
        if isinstance(expansions, str):
            expansions = [expansions]
        if not isinstance(expansions, list) or not expansions:
            raise VocabularyError(where, "must be a non-empty list of expansions")
        if len(expansions) > MAX_EXPANSIONS:
            raise VocabularyError(where, f"at most {MAX_EXPANSIONS} expansions")
        for i, expansion in enumerate(expansions):
            _check_term(expansion, f"{where}[{i}]")
        checked[term] = expansions
    vocabulary = Vocabulary(checked)
    for term in vocabulary.entries():
        if term in _reachable(vocabulary, term):
            raise VocabularyError(
                f"{prefix}{term}",
                "is cyclic: it expands back to itself; write an equivalence once, "
                "from the word a question uses to the words the documents print",
            )
    return vocabulary


def _check_term(term: object, where: str) -> None:
    if not isinstance(term, str) or not fold(term):
        raise VocabularyError(where, "a term must be non-empty text")
    if len(term) > MAX_TERM_CHARS:
        raise VocabularyError(where, f"a term is at most {MAX_TERM_CHARS} characters")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in term):
        raise VocabularyError(where, "a term may not hold control characters or surrogates")


def _reachable(vocabulary: Vocabulary, term: str) -> set[str]:
    seen: set[str] = set()
    stack = list(vocabulary._edges.get(term, ()))
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(vocabulary._edges.get(current, ()))
    return seen


# "海川物流：海川冷链物流股份有限公司2025年年度报告", "中诚证券：金禾酒业（600579）2026年…"
_FILING_TITLE = re.compile(
    r"^(?P<short>[^：:（(\s]{2,12})[：:](?P<full>[^（(\s]{4,40}?(?:股份)?有限公司)"
)
_NOTE_TITLE = re.compile(r"[：:](?P<short>[^：:（(\s]{2,12})[（(](?P<code>\d{6})[)）]")


def entity_aliases(titles: Iterable[str]) -> Vocabulary:
    """Short name ↔ full name and stock code, from titles of the two shapes A-share
    documents use (the expansion is a cycle on purpose: ``expand`` stops at the term
    itself, and no operator wrote it); other titles add nothing."""
    groups: dict[str, set[str]] = {}
    for title in titles:
        title = unicodedata.normalize("NFKC", title)
        if match := _FILING_TITLE.match(title):
            groups.setdefault(fold(match["short"]), set()).add(fold(match["full"]))
        if match := _NOTE_TITLE.search(title):
            groups.setdefault(fold(match["short"]), set()).add(match["code"])
    entries: dict[str, set[str]] = {}
    for short, names in groups.items():
        entries.setdefault(short, set()).update(names)
        for name in names:
            # And back: a question naming the full name or the code also finds the
            # pages that print only the short name (expand() stops at the term itself).
            entries.setdefault(name, set()).add(short)
    return Vocabulary(entries)


def _builtin() -> Vocabulary:
    entries: dict[str, list[str]] = {
        # Abbreviations and the words filings print instead.
        "eps": ["基本每股收益"],
        "每股收益": ["基本每股收益"],
        "roe": ["加权平均净资产收益率"],
        "净资产收益率": ["加权平均净资产收益率"],
        "nim": ["净息差"],
        "息差": ["净息差"],
        # A spread or a margin that narrows (净利差同比收窄) is printed as a fall: 同比下降
        # 0.12 个百分点.
        "收窄": ["下降"],
        "npl": ["不良贷款率"],
        "不良率": ["不良贷款率"],
        "拨覆率": ["拨备覆盖率"],
        # The regulators' inclusive small-business loans (普惠型小微企业贷款), as an analyst
        # shortens them; a balance against the year's start is against 上年末.
        "普惠小微": ["普惠型小微企业"],
        "比年初": ["较上年末", "比上年末"],
        "较年初": ["较上年末", "比上年末"],
        # A bank's capital adequacy on two bases: the group's (并表, consolidated; an insurer's
        # 集团合并) and the parent bank's alone (非并表) — an analyst's 合并口径 and 母公司口径.
        "母公司口径": ["非并表"],
        "合并口径": ["并表", "合并"],
        "总裁": ["总经理"],
        "ceo": ["总经理"],
        "cfo": ["财务总监"],
        "董秘": ["董事会秘书"],
        "一把手": ["董事长"],
        "定增": ["向特定对象发行", "募集资金"],
        "募资": ["募集资金"],
        "营收": ["营业收入"],
        # (a bank writes 本行 for the company: 归属于本行股东的净利润; the consolidated
        # statements of 企业会计准则 write 归属于母公司股东（所有者）的净利润)
        "归母净利润": [
            "归属于上市公司股东的净利润",
            "归属于本行股东的净利润",
            "归属于母公司股东的净利润",
            "归属于母公司所有者的净利润",
        ],
        "归母净利": ["归母净利润"],
        "扣非净利润": ["扣除非经常性损益的净利润", "扣除非经常性损益后的净利润"],
        # (扣非 alone is how an analyst names the figure: 扣非呢？ after 净利润…)
        "扣非": ["扣除非经常性损益后的净利润", "扣除非经常性损益的净利润"],
        "扣非归母净利润": ["扣除非经常性损益的净利润"],
        "经营性现金流": ["经营活动产生的现金流量净额"],
        "经营现金流": ["经营活动产生的现金流量净额"],
        # What a question calls a report's item, and what the report prints.
        "收入": ["营业收入"],
        "净利": ["净利润"],
        "仓位": ["占比"],
        # A holding's weight in a fund is its share of the fund's net assets, as the report's
        # list of holdings prints it (占基金资产净值 3.6%).
        "权重": ["占比", "占基金资产净值"],
        "重仓股": ["前五名股票", "第一大重仓股"],
        "净值增长": ["净值增长率"],
        "研发投入": ["研发费用"],
        "现金流": ["现金流量净额"],
        "风险": ["风险提示"],
        "比例": ["占比", "占基金资产净值"],
        "比重": ["占比", "比例"],
        "持有": ["持仓"],
        "增速": ["增长率", "同比增长"],
        "净利率": ["净利润率"],
        # An expense ratio is the expense over revenue: filings print 研发费用…占营业收入的 N%.
        "费用率": ["占营业收入"],
        "基准": ["业绩比较基准"],
        # What a fund report prints for a fund's unit value, size and holdings.
        "单位净值": ["基金份额净值"],
        "基金规模": ["基金资产净值"],
        # A fund is founded when its contract takes effect: 基金合同生效日.
        "成立": ["基金合同生效"],
        "成立日": ["基金合同生效日"],
        # A fund's stage since it was founded, as its report's table of stages prints it.
        "成立以来": ["自基金合同生效起至今"],
        "成立至今": ["自基金合同生效起至今"],
        # Its return over its benchmark's (超额收益): its net value's growth less the
        # benchmark's return, as the report's table of stages heads that column (①－③ over
        # 份额净值增长率① and 业绩比较基准收益率③, read by agents/providers/structure.py).
        "超额收益": ["净值增长率－业绩比较基准收益率"],
        "超额收益率": ["净值增长率－业绩比较基准收益率"],
        # A fund's performance over a stage, as its report's table names the stages
        # (阶段: 过去三个月, 过去六个月, 过去一年, 过去三年…).
        **{
            f"{near}{span}": [f"过去{printed}"]
            for near in ("近", "最近")
            for span, printed in (
                ("三个月", "三个月"),
                ("3个月", "三个月"),
                ("六个月", "六个月"),
                ("6个月", "六个月"),
                ("一年", "一年"),
                ("1年", "一年"),
                ("三年", "三年"),
                ("3年", "三年"),
                ("五年", "五年"),
                ("5年", "五年"),
            )
        },
        "债券持仓": ["债券投资"],
        "股票持仓": ["股票投资"],
        "持仓": ["投资明细"],
        # A fund manager's 增配 / 减配 (adding to or cutting a sector) as its report prints
        # them: 增加了…板块的配置, 增持; 减少…的配置, 减持.
        "增配": ["增加", "增持"],
        "减配": ["减少", "减持"],
        "资产配置": ["资产组合", "投资组合"],
        # What a filing prints for a dividend and a company's line of business.
        "分红": ["派发现金红利", "利润分配", "权益分派"],
        "派息": ["派发现金红利"],
        "股息": ["现金红利"],
        "主营业务": ["主营", "主要业务"],
        "业务": ["主营"],
        "主要产品": ["主营"],
        "产品线": ["产品"],
        "募投项目": ["募集资金投资项目", "募集资金"],
        # What an analyst calls the shareholder count; a periodic report prints 股东总数（户）.
        "股东户数": ["股东总数"],
        # A holder's share of the company's shares: a holders' table prints 持股比例, a
        # sentence 占总股本的 N%.
        "持股比例": ["占总股本"],
        # The share capital as an announcement prints it (公司股本总额 40,000.00 万股).
        "总股本": ["股本总额"],
        # A number of shares as a table's header prints it (获授的限制性股票数量（万股）).
        "股数": ["股票数量", "股份数量"],
        "占总股本": ["持股比例"],
        # Period aliases.
        "q1": ["第一季度"],
        "q2": ["第二季度"],
        "q3": ["第三季度"],
        "q4": ["第四季度"],
        "一季度": ["第一季度"],
        "二季度": ["第二季度"],
        "三季度": ["第三季度"],
        "四季度": ["第四季度"],
        "一季报": ["第一季度报告"],
        "三季报": ["第三季度报告"],
        "h1": ["半年度"],
        "中报": ["半年度报告"],
        "半年报": ["半年度报告"],
        "中期报告": ["半年度报告"],
        "年报": ["年度报告"],
        # What an analyst writes and what a filing prints instead.
        "扣非后净利润": ["扣除非经常性损益后的净利润", "扣除非经常性损益的净利润"],
        "地区": ["区域"],
        "片区": ["区域"],
        # A rise or a fall said in one word (沪深300涨了多少) as a report prints it: 沪深 300
        # 指数上涨 7.6%, 同比增长…
        "涨": ["上涨", "增长"],
        "跌": ["下跌", "下降"],
        # Colloquial verbs that name the figure asked (赚了多少, 卖了多少钱).
        "赚": ["净利润"],
        "挣": ["净利润"],
        "卖": ["营业收入", "销售收入", "销售额", "销量"],
        # What a placement plan prints for a lock-up, a broker for its note and P/E.
        "锁定": ["限售", "不得转让"],
        "锁定期": ["限售期"],
        # A cap as a plan prints it (募集资金总额不超过…, 不超过本次发行前总股本的 30%).
        "上限": ["不超过"],
        # How long an authorisation or a resolution holds, as a board prints it (使用期限自董事会
        # 审议通过之日起 12 个月内有效; 授权期限, 决议有效期).
        "有效期": ["期限"],
        "研报": ["研究报告", "点评"],
        "pe": ["p/e", "市盈率"],
        # Valuation and balance-sheet words an analyst abbreviates.
        "pb": ["p/b", "市净率"],
        # (and the Chinese words, as a note's forecast table prints them: P/E（倍）, P/B（倍）)
        "市盈率": ["p/e", "pe"],
        "市净率": ["p/b", "pb"],
        "roa": ["总资产收益率"],
        "负债率": ["资产负债率"],
        "总资产": ["资产总计", "资产总额"],
        # (a company's market value is its 总市值; a holding's, in a fund's or an insurer's
        # table of investments, is printed 公允价值)
        "市值": ["总市值", "公允价值"],
        # People and holders, as announcements print them.
        "独董": ["独立董事"],
        "实控人": ["实际控制人"],
        "大股东": ["控股股东", "第一大股东"],
        "财务总监": ["财务负责人"],
        # Senior management as company law defines it (高级管理人员: 经理, 副经理, 财务负责人,
        # a listed company's 董事会秘书) and a grants table lists its members by post.
        "高管": ["高级管理人员", "总经理", "副总经理", "财务总监", "财务负责人", "董事会秘书"],
        # An appointment as a board's announcement prints it (聘任…为首席精算师).
        "新聘": ["聘任", "聘请"],
        "新任": ["聘任", "任命", "选举"],
        # A holder's stake as a sentence prints it (直接持有公司 4.80% 的股份).
        "直接持股": ["直接持有"],
        "间接持股": ["间接持有"],
        # An insurer's indicators (the industry's abbreviations and what its reports print).
        "nbv": ["新业务价值"],
        "ev": ["内含价值"],
        "cor": ["综合成本率"],
        "保费": ["保险业务收入", "原保险保费收入"],
        "偿付能力": ["偿付能力充足率"],
        "赔付率": ["综合赔付率"],
        "财险": ["财产险"],
        "产险": ["财产险"],
        "寿险": ["人寿保险"],
        "继续率": ["保单继续率"],
        # A dividend's dates and amounts as an implementation announcement prints them.
        "除息日": ["除权（息）日", "除权除息日"],
        "除权日": ["除权（息）日", "除权除息日"],
        "登记日": ["股权登记日"],
        "发放日": ["现金红利发放日", "红利发放日"],
        "派息日": ["现金红利发放日"],
        "每股分红": ["每股派发现金红利", "每股现金红利"],
        "送转": ["资本公积转增", "送红股"],
        "转增": ["资本公积转增"],
        # Share incentives: a plan's words.
        "股权激励": ["限制性股票激励计划", "股票期权激励计划", "激励计划"],
        "授予价": ["授予价格"],
        "行权价": ["行权价格"],
        "解锁": ["解除限售"],
        "解禁": ["解除限售", "上市流通"],
        "考核目标": ["业绩考核目标"],
        # An earnings preview (业绩预告): the exchanges' template explains the change it
        # forecasts under 业绩变动原因说明.
        "预增": ["业绩预告", "业绩变动"],
        "预减": ["业绩预告", "业绩变动"],
        "预亏": ["业绩预告", "业绩变动"],
        # A preview's figures are printed as what the company expects (预计 … 至 … 万元).
        "预告": ["预计"],
        # What a company or an analyst expects is written either way (公司内部预期全年…).
        "预计": ["预期"],
        # A cause as filings write it after the change it explains (…较上年度末增长 14.8%，
        # 主要系收入增长…; …所致; 主要是由于…).
        "原因": ["主要系", "系由于", "主要由于", "主要是由于", "所致"],
        # A total as a sentence or a table prints it (共计派发现金红利…, a 合计 row).
        "总额": ["共计", "合计", "总计"],
        "总量": ["总数"],
        # A segment as the accounting standard names it (经营分部) and a report's table heads it.
        "业务分部": ["分部"],
        "板块": ["分部"],
        "经营分部": ["分部"],
        # Industries and product lines as an analyst shortens them (工控 for 工业控制, a
        # report's 工业控制 row of its products).
        "工控": ["工业控制"],
        # Cold-chain logistics: a cold store (冷库) is what a logistics report prints as its
        # 冷链仓储 (冷链仓储面积 … 万平方米), a refrigerated truck (冷藏车) as its 冷藏车辆.
        "冷库": ["冷链仓储", "冷链仓库"],
        "可转债": ["可转换公司债券"],
        "回购": ["回购股份"],
    }
    return Vocabulary(entries)


BUILTIN = _builtin()
