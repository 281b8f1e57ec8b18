"""Reading questions without a model (the extractive provider's toolkit).

Pure functions, no database. Chinese has no spaces, so a question is cut into *terms* by
what the retrieved text itself contains: each run of the question is segmented greedily
into the longest pieces that occur in the excerpts, titles or fact labels (or in the small
lexicon of report abbreviations below); what occurs nowhere is an *unknown* term. What a
text *states* of a term (``states``, ``covers``) is decided here too; excerpts are cut into
units in ``agents.providers.structure``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from knowledge.periods import periods_in
from knowledge.vocabulary import BUILTIN

# The longest piece a question or phrase is matched by (a term, a figure's label): a
# 10,000-character question is read in linear time, not cubic.
MAX_PIECE = 32

# Question words and particles: they carry no subject.
_QUESTION_WORDS = (
    "是多少",
    "有多少",
    "能拿到多少",
    "是谁",
    "在哪里",
    "在哪",
    "哪里",
    "几",
    "哪几类",
    "哪几个",
    "哪几",
    "哪位",
    "多大",
    "多高",
    "多长",
    "多久",
    "多远",
    "多快",
    "做什么",
    "干什么",
    "几个",
    "对比一下",
    "对比",
    "比较",
    "哪个高",
    "哪个更高",
    "谁更高",
    "各占",
    "为多少",
    "多少",
    "是什么",
    "有哪些",
    "是哪些",
    "哪些",
    "哪个",
    "哪家",
    "什么",
    "怎么样",
    "怎样",
    "如何",
    "请问",
    # an analyst's lead-in and the company pointed back to (我想了解一下这家公司…)
    "我想了解",
    "我想知道",
    "想了解",
    "想知道",
    "了解一下",
    "帮我查",
    "帮我看",
    "查一下",
    "看一下",
    "告诉我",
    "这家公司",
    "该公司",
    "这家",
    "介绍一下",
    "说说",
    "一下",
    "分别",
    "各自",
    "情况",
    "具体",
    # verbs that introduce the enumeration asked for (分成哪几类, 包括哪些)
    "分成",
    "分为",
    "包括",
    "包含",
    # hedges on the figure asked (大约多少, 左右)
    "大约",
    "大概",
    "左右",
    # adverbs of the whole asked (一共有多少)
    "一共",
    "总共",
    "相比",
)
# Replaced longest first: 哪几类 before 几, 是多少 before 多少.
_QUESTION_WORDS_LONGEST = tuple(sorted(_QUESTION_WORDS, key=len, reverse=True))
# Single characters that separate terms when they stand between them.
_PARTICLES = set("的了吗呢吧呀么和与及或、，,。？?！!：:；;（）()「」“”\"' \t\n")
# Leading words of an elliptical follow-up.
_FOLLOW_UP_LEAD = ("那么", "那", "还有", "另外", "再看", "再问", "同期")
# Time qualifiers: they rank sentences; a year must also be found.
_TIME = re.compile(
    r"(?:(?:19|20)\d{2}\s*年?(?:度)?)"
    # a change on the year before (营收比上年增长多少): the year-on-year period, not a
    # thing compared with (较上年末 is the balance at the year's end)
    r"|(?:比|较)(?:上年|去年)(?:同期)?(?!末)"
    r"|(?:前三季度|第?[一二三四1-4]\s*季度|[Qq][1-4]|单季度?|累计|同比|去年|今年|本年度?|当年|[一三]季报|年报|上半年|下半年|半年报|半年度|全年"
    r"|年初至报告期末|报告期末|本报告期|报告期内|期末"
    # the present and the quarter a question is asked in (现在, 这个季度): the report's own
    r"|现在|目前|当前|眼下|如今|这一?个?季度?|本季度?|当季度?)"
)
# A count or an interrogative with its measure word (两只, 几家, 哪几类, 哪些): grammar of
# the question, not what it asks about.
_MEASURE = re.compile(
    r"哪[些几]?(?:类别|种类|类型)"
    r"|(?:(?<!前)[两二三四五六七八九十几]|哪[几一]?|多少)(?:部分|方面|[只家个条台项类种位名块些])|哪"
    # a comparative question: 谁更大, 哪个更高
    r"|(?:谁|哪个|哪家|哪只)更?[高大低小多少快慢好]|更[高大低小多快慢好]"
)
_YEAR = re.compile(r"(?:19|20)\d{2}")
# Single characters that are grammar at a phrase's edge, not part of what is asked
# (创新药收入在…中占多大比重 → 创新药收入, 比重).
# Heads that name the form of an answer, not its subject (收入规模 asks for 收入, 业务构成
# for 业务): dropped from the end of a phrase that keeps two characters.
_LIGHT_HEADS = ("规模", "构成", "方案", "水平", "情况", "数据", "因素", "方面", "点")
# Modifiers that rank what is asked, not name another thing (主要风险 asks the 风险 a report
# lists under 风险提示): dropped from the start of a phrase that keeps two characters.
_LIGHT_MODIFIERS = ("主要",)
# Verbs that link the thing asked to its value or its holder, not part of the thing:
# 冷链仓储面积达到(了多少), 半年报提到(了哪些风险), 收益率下行到(多少), 持有华岳银行(的比例).
_PREDICATE_AFTER = re.compile(
    r"(?:达到|提到|提及|列出|列了|列举|披露了?|录得|来自|投向|用于|下行到|上行到|上升到|下降到|增长到|降至|升至|增至|减至|到|达"
    # verbs of obtaining and of reaching a stage (拿到了多少首付款, 几个项目进了三期临床)
    r"|拿到|拿了|收到|得到|获得|取得|进入|处于|(?<![先改引推促增跟])进"
    # verbs of spending on the thing (研发花了多少钱, 研发投了多少)
    r"|花了?|花费|花掉|用了|(?<!定)投了?)$"
)
# A phrase that is only such a verb (远川冷链列举了哪些风险 → 列举; 面临的风险 → 面临) asks
# nothing of its own when the question asks something else.
_PREDICATE_ONLY = frozenset(
    [
        "列举",
        "列出",
        "提到",
        "提及",
        "披露",
        "面临",
        "来自",
        "从事",
        "经营",
        "涉及",
        "包括",
        "包含",
        "拥有",
        "持有",
        "重仓",
        "投资",
        "布局",
        "采用",
        # verbs of what a whole is made of (收入由哪几部分构成)
        "构成",
        "组成",
        # where a holding is (手上有多少项专利): 拥有
        "手上",
        "手里",
        "手中",
    ]
)
_PREDICATE_BEFORE = re.compile(r"^(?:持有|拥有)(?=..)")
# By how much a thing beat another (跑赢基准多少): what it is compared with is asked, the
# verb is not — when a figure is asked (跑赢基准了吗 asks a judgement no excerpt writes).
_OUTPERFORMED = re.compile(r"^(?:跑赢|跑输|超越|超过|落后于?)(?=..)")
# A comparison written 比 X 高 (净值增长率比基准高多少): X is what the thing is compared
# with, 比 and the comparative are grammar (not 比例, 比重, 占比, 同比, 环比, 对比, 比较).
_COMPARED_WITH = re.compile(
    r"(?<![占同环对])比(?![例重率较])(?P<other>(?:比较|[^，。？?！!比|]){1,16}?)(?:更|还)?"
    r"[高低大小多少快慢](?:出|了)?"
)
# A question that compares two things of one entity (净利润率与资产负债率哪个高, 净利润增速
# 比营收增速高多少, 相差多少): the answer ends with which is higher and by how much.
_COMPARES = re.compile(
    r"(?<![占同环对])比(?![例重率较]|上年|去年|上期)|(?:哪个|哪项|哪一个|谁)更?[高大低小多少快慢]"
    r"|(?:哪个|哪项|哪一个|谁)[^，。？?]{1,8}?[高大低小快慢]"
    r"|更[高大低小多快慢好]|相差|差[了距额]|差多少|高出|多出|对比|比较|相比|孰"
)
# How many things (几项风险, 多少个项目), not how much (多少钱).
_COUNTS = re.compile(r"(?:几|多少)(?:部分|方面|[只家个条项类种位名块])")
# A superlative asked over a table's rows (哪个区域…最高): the row with the extreme value.
_SUPERLATIVE = re.compile(r"最(?P<high>高|大|多|快|好)|最(?P<low>低|小|少|慢|差)")
_EDGE_FUNCTION = set("在中占对于从向把被将给让以里内其是为有由各都")
_ENUMERATES = re.compile(
    r"哪些|哪几|都有什么|都是什么|(?:包括|包含|涵盖)(?:了)?什么|分别|名单|列表"
    r"|几[只个家位名条项类种块][^，。？?!！]{0,12}?(?:是什么|是谁|是哪|叫什么|有什么)"
    r"|前[\d一二三四五六七八九十]+[名大]|(?<!哪)几[项类种]"
)
_SHARE_WORDS = ("比例", "比重", "占比")
# Asks which ones (a list of things), not how much of each.
_WHICH = re.compile(
    r"哪些|哪几|都有什么|都是什么|(?:包括|包含|涵盖)(?:了)?什么"
    # a count whose things are named (持仓最多的几只股票是什么): which ones
    r"|几[只个家位名条项类种块][^，。？?!！]{0,12}?(?:是什么|是谁|是哪|叫什么|有什么)"
)
# Asks for a number: how much, how many, how large.
_ASKS_FIGURE = re.compile(r"多少|多大|多高|多长|多久|(?<!哪)几[个家只条项台人名位次年倍]")
# Asks for a share (占…, 比例, 比重, 占比): the whole a share is of is then part of it.
_EACH = re.compile(r"各|分别|每个|每一")
_ASKS_SHARE = re.compile(r"占|比例|比重|份额|仓位|费用率")  # (an expense ratio: a share of revenue)
_QUANTITATIVE = re.compile(r"多少|几|比例|占比|[率额]|规模|金额")


# A top-N count (前五名, 前三大, 前10名): compared as one form, 前N — the question's
# 前三大重仓股 is the report's 前三名股票 (the vocabulary prints 重仓股 as 前五名股票).
_COUNT = re.compile(r"前[\d一二三四五六七八九十]+[名大位]")


def counted(text: str) -> str:
    return _COUNT.sub("前N", text)


def _lexicon() -> dict[str, tuple[str, ...]]:
    """Each term of the domain vocabulary (knowledge/vocabulary.py, one home for synonyms,
    abbreviations and period aliases) with what a text may print for it: itself or any of
    its expansions."""
    lexicon = {}
    for term in BUILTIN.entries():
        if term.isascii():  # ASCII terms (eps, q3) are matched as words by the vocabulary
            continue
        expansions = sorted(BUILTIN.expand(term))
        lexicon[term] = tuple(dict.fromkeys(counted(e) for e in [term, *expansions]))
    return lexicon


LEXICON = _lexicon()
_SHARE = re.compile(r"占[^，。；,;\n]{0,24}?\d+(?:\.\d+)?\s*[%％]")
# The whole a share is of: 占营业收入的 (39.9%), 占基金资产净值 (8.9%).
# A change asked (变化了多少) is stated by the direction it took (下降 4.2%); a direction
# asked (增长多少) by a signed change (a column 本报告期比上年同期增减).
_CHANGE_ASKED = ("变化", "变动", "增减", "升降")
_CHANGE_STATED = re.compile(r"增长|下降|增加|减少|提高|降低|上升|增减|变动|变化|提升|下滑")
_DIRECTIONS = ("增长", "下降", "增加", "减少", "提高", "降低", "上升", "提升", "下滑")
_SIGNED_CHANGE = re.compile(r"增减|变动|变化")
_COLLOQUIAL_CHANGE = ("涨幅", "跌幅", "涨", "跌")
# A direction is stated by another word of the same sense (下滑 by 下降 4.5%).
_UP = ("增长", "增加", "提高", "上升", "提升", "上涨")
_DOWN = ("下降", "减少", "降低", "下滑", "下跌", "回落")
_SHARE_OF = re.compile(r"占[^，。；,;\n\d]{1,24}?的?(?=\s*\d+(?:\.\d+)?\s*[%％])")
_ENUMERATION = re.compile(
    r"[^\s、；;，,。]、[^\s、；;，,。]|[；;]\s*\S|[^\s]\s*(?:与|和|及|以及)\s*[^\s]"
)

_CN_DIGITS = {c: i for i, c in enumerate("一二三四五六七八九十", start=1)}
_TITLE_TAIL = re.compile(r"\s*(?:(?:19|20|１９|２０)\d{2}|（|\().*$")


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def coverage(term: str, text: str) -> float:
    """How much of ``term`` ``text`` states, 0..1: the share of its characters inside pieces
    (≥ 2 characters, or an abbreviation's expansion) that ``text`` contains."""
    if not term:
        return 0.0
    if term in text:
        return 1.0
    term, text = counted(term), counted(text)
    return sum(_mask(term, text)) / len(term) if term else 0.0


def _mask(term: str, text: str) -> list[bool]:
    """Which characters of ``term`` lie inside pieces ``text`` states."""
    covered = [False] * len(term)
    for key, expansions in LEXICON.items():
        at = term.find(key)
        stated = any(e in text for e in expansions)
        if not stated and "占比" in expansions:
            # A share is written as 占…的 N%: "占营业收入的 39.9%" states 占比 / 比重.
            stated = bool(_SHARE.search(text))
        if at >= 0 and stated:
            covered[at : at + len(key)] = [True] * len(key)
    for words, stated in (
        (("占比",), bool(_SHARE.search(text))),
        # 涨了多少 / 跌幅 ask a change, stated by the direction a report writes (增长 7.85%)
        (_COLLOQUIAL_CHANGE, bool(_CHANGE_STATED.search(text))),
        (_UP, any(w in text for w in _UP)),
        (_DOWN, any(w in text for w in _DOWN)),
        (_CHANGE_ASKED, bool(_CHANGE_STATED.search(text))),
        (_DIRECTIONS, bool(_SIGNED_CHANGE.search(text))),
    ):
        for word in words:
            at = term.find(word)
            if at >= 0 and stated:
                covered[at : at + len(word)] = [True] * len(word)
    i = 0
    pieces: dict[int, int] = {}  # where a stated piece ends → where it starts
    while i < len(term):
        for j in range(min(len(term), i + MAX_PIECE), i + 1, -1):
            if term[i:j] in text:
                covered[i:j] = [True] * (j - i)
                pieces[j] = i
                i = j
                break
        else:
            i += 1
    # A head written short (里程碑款 for 里程碑付款, 研发费 for 研发费用's 研发费): the last
    # character, alone uncovered, ends a word the text writes right after the covered piece
    # before it (one or two characters between).
    end = len(term) - 1
    if end >= 2 and not covered[end] and end in pieces:
        before = re.escape(term[pieces[end] : end])
        if re.search(before + r"[^\s\d，。；、,.;|]{1,2}" + re.escape(term[end]), text):
            covered[end] = True
    return covered


def stated_characters(term: str, text: str) -> list[bool]:
    """Which characters of ``term`` pieces of ``text`` state (top-N counts in one form)."""
    return _mask(counted(term), counted(text))


def covers(term: str, text: str) -> bool:
    return coverage(term, text) >= 0.6


# -- questions -------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    text: str
    terms: tuple[str, ...]  # pieces the retrieved text knows, in question order
    unknown: tuple[str, ...]  # pieces it does not know (≥ 2 characters)
    times: tuple[str, ...]  # time qualifiers as written
    years: tuple[str, ...]
    follow_up: bool  # reads as an elliptical follow-up (那净利润呢？)
    enumerates: bool = False  # asks for a list (有哪些, 前五大…)
    quantitative: bool = False  # asks for a figure (多少, 比例, …率)
    which: bool = False  # asks which ones (哪些, 哪几): a list of things
    asks_figure: bool = False  # asks for a number (多少, 多大, 几个)
    asks_share: bool = False  # asks for a share (占, 比例, 比重)
    each: bool = False  # asks for every one (各产品, 分别): a whole column or enumeration
    extreme: int = 0  # a superlative: 1 the highest (最高), -1 the lowest (最低)
    compares: bool = False  # compares two things (哪个高, 比…高多少, 相差)
    counts: bool = False  # asks how many things (几项, 多少个): a list's items answer
    ordinal: int = 0  # picks one item of a ranked list (第一大重仓股 → 1)
    ordinal_text: str = ""  # as written (第一大)
    judged: tuple[str, ...] = ()  # runs of a yes/no sentence the rest of the question evidences
    runs: tuple[str, ...] = ()  # the question between particles, question words and times
    periods: frozenset[str] = frozenset()  # the periods it names, canonical (periods_in)


def _runs(question: str) -> tuple[list[str], list[str]]:
    # 第一大重仓股 is an item of the 前N list; 第二个风险 of the list of 风险
    text = _ORDINAL_PICK.sub(
        lambda m: f"前{m.group('n')}{m.group('kind')}" if m.group("kind") in "大名位" else "|",
        fold(question),
    )
    times = [m.group(0).strip() for m in _TIME.finditer(text)]
    text = _TIME.sub("|", text)
    # Counts with their measure word first (哪几块, 前三大), then question words.
    text = _MEASURE.sub("|", text)
    text = _SUPERLATIVE.sub("|", text)
    text = _COMPARED_WITH.sub(lambda m: f"|{m.group('other')}|", text)
    for word in _QUESTION_WORDS_LONGEST:
        text = text.replace(word, "|")
    runs: list[str] = []
    current: list[str] = []
    for char in text:
        if char in _PARTICLES or char == "|":
            if current:
                runs.append("".join(current))
            current = []
        else:
            current.append(char)
    if current:
        runs.append("".join(current))
    return runs, times


def _segment(run: str, corpus: str, names: tuple[str, ...] = ()) -> list[tuple[str, bool]]:
    """Greedy longest pieces of ``run`` the corpus states: (piece, known). A document's
    entity name is a piece of its own (北辰医药|核心产品, not 北辰医药核心产品 because a
    text once wrote them together)."""
    pieces: list[tuple[str, bool]] = []
    i = 0
    unknown: list[str] = []
    while i < len(run):
        match = next((len(n) for n in names if run.startswith(n, i)), 0)
        for j in range(min(len(run), i + MAX_PIECE), i + 1, -1):
            if match:
                break
            piece = run[i:j]
            if piece in corpus or piece in LEXICON:
                match = j - i
                break
        if match >= 2:
            if unknown:
                pieces.append(("".join(unknown), False))
                unknown = []
            pieces.append((run[i : i + match], True))
            i += match
        else:
            unknown.append(run[i])
            i += 1
    if unknown:
        pieces.append(("".join(unknown), False))
    return pieces


def _grammar_only(piece: str) -> bool:
    """A piece that is only a linking verb (拿到, 进入) or where a holding is (手上): it
    names nothing the excerpts must mention."""
    return piece in _PREDICATE_ONLY or not _PREDICATE_AFTER.sub("", piece)


def read_question(question: str, corpus: str, names: tuple[str, ...] = ()) -> Question:
    """The terms of ``question`` as the retrieved ``corpus`` (texts, titles, labels) knows
    them; ``names``: the retrieved documents' entity names, each a term of its own."""
    names = tuple(sorted({fold(n) for n in names if len(n) >= 2}, key=len, reverse=True))
    stripped = fold(question).strip()
    follow_up = stripped.startswith(_FOLLOW_UP_LEAD) or stripped.rstrip("？?。 ").endswith("呢")
    runs, times = _runs(question)
    judged = _judged_runs(stripped)
    terms, unknown = [], []
    for run in runs:
        for lead in _FOLLOW_UP_LEAD:
            if run.startswith(lead) and len(run) > len(lead):
                run = run[len(lead) :]
                break
        for piece, known in _segment(run, corpus, names):
            if known:
                terms.append(piece)
            elif len(piece) >= 2 and not _grammar_only(piece):
                unknown.append(piece)
    return Question(
        text=question,
        terms=tuple(dict.fromkeys(terms)),
        unknown=tuple(dict.fromkeys(unknown)),
        times=tuple(dict.fromkeys(times)),
        years=tuple(dict.fromkeys(_YEAR.findall(" ".join(times)))),
        follow_up=follow_up,
        enumerates=bool(_ENUMERATES.search(stripped)) or bool(_ORDINAL_PICK.search(stripped)),
        quantitative=bool(_QUANTITATIVE.search(stripped)),
        which=bool(_WHICH.search(stripped)),
        asks_figure=bool(_ASKS_FIGURE.search(stripped)),
        asks_share=bool(_ASKS_SHARE.search(stripped)),
        each=bool(_EACH.search(stripped)),
        extreme=_extreme(stripped),
        compares=bool(_COMPARES.search(stripped)),
        counts=bool(_COUNTS.search(stripped)),
        ordinal=_ordinal(stripped),
        ordinal_text=next((m.group(0) for m in _ORDINAL_PICK.finditer(fold(stripped))), ""),
        judged=judged,
        runs=tuple(runs),
        periods=periods_in(stripped),
    )


_SENTENCES = re.compile(r"[^?？!！。]+[?？!！。]*")


def _judged_runs(question: str) -> tuple[str, ...]:
    """The runs of a yes/no sentence (跑赢基准了吗？) that another sentence of the question
    asks the figures of (净值增长率和基准收益率各是多少？): the reader quotes the figures and
    leaves the judgement to the reader — the yes/no sentence is no phrase of the floor."""
    sentences = [s.strip() for s in _SENTENCES.findall(fold(question)) if s.strip()]
    if len(sentences) < 2:
        return ()
    yes_no = [s for s in sentences if s.rstrip("?？!！。 ").endswith("吗")]
    asking = [s for s in sentences if s not in yes_no and _ASKS_FIGURE.search(s)]
    if not yes_no or not asking:
        return ()
    return tuple(run for s in yes_no for run in _runs(s)[0])


# One item of a ranked list (第一大重仓股, 第二名客户): read as the list (前N…), then the item.
_ORDINAL_PICK = re.compile(
    r"第(?P<n>[一二三四五六七八九十]{1,3}|\d{1,2})(?P<kind>大|名|位|个|项|只|家)"
)


def _ordinal(question: str) -> int:
    match = _ORDINAL_PICK.search(fold(question))
    if match is None:
        return 0
    n = match.group("n")
    return int(n) if n.isdigit() else cn_number(n)


def _extreme(question: str) -> int:
    match = _SUPERLATIVE.search(question)
    if match is None:
        return 0
    return 1 if match.group("high") else -1


def topic_phrases(question: Question, entity_terms: list[str] | tuple[str, ...]) -> list[str]:
    """What the question asks about its entity: each run of the question with the entity's
    names cut out and grammar characters trimmed from the edges (北辰医药的董事长是谁 →
    董事长; 创新药板块收入在北辰医药营收中占多大比重 → 创新药板块收入, 营收, 比重)."""
    out: list[str] = []
    # A generic name inside a fuller one (基金 in 星河稳健收益债券基金) is not cut out:
    # 基金经理 stays what is asked.
    folded = {fold(t) for t in entity_terms}
    names = sorted((t for t in folded if not any(t != o and t in o for o in folded)), key=len)[::-1]
    for run in question.runs:
        if run in question.judged:
            continue
        for lead in _FOLLOW_UP_LEAD:
            if run.startswith(lead) and len(run) > len(lead):
                run = run[len(lead) :]
                break
        for name in names:
            run = run.replace(name, "|")
        for piece in run.split("|"):
            piece = _PREDICATE_AFTER.sub("", _PREDICATE_BEFORE.sub("", piece))
            if question.asks_figure:
                piece = _OUTPERFORMED.sub("", piece)
            if question.compares and len(piece) > 2 and piece[-1] in "高大低小多少快慢":
                piece = piece[:-1]  # the comparative of 哪个占比高: 占比 is asked
            kept = (*question.terms, *_SHARE_WORDS)
            # A piece the excerpts write as it is keeps its edges (在研管线 is not 研管线).
            while piece and piece[0] in _EDGE_FUNCTION and piece not in kept:
                piece = piece[1:]
            while piece and piece[-1] in _EDGE_FUNCTION and piece not in kept:
                piece = piece[:-1]
            piece = _PREDICATE_AFTER.sub("", piece)
            if piece.endswith("占") and len(piece) > 2:
                piece = piece[:-1]  # the verb of a share (海外收入占多大比例), even where a
                # text writes the phrase on (海外收入占比)
            # A word of the vocabulary (主要产品, 基金规模) keeps its modifier and its head.
            lexical = piece in LEXICON
            for light in _LIGHT_MODIFIERS:
                if piece.startswith(light) and len(piece) - len(light) >= 2 and not lexical:
                    piece = piece[len(light) :]
            for light in _LIGHT_HEADS:
                if piece.endswith(light) and len(piece) - len(light) >= 2 and not lexical:
                    piece = piece[: -len(light)]
                    break
            if piece in _LIGHT_MODIFIERS:
                continue  # 主要 alone (主要做什么业务) ranks, it names nothing
            if len(piece) >= 2 and piece not in out:
                out.append(piece)
    asked = [piece for piece in out if piece not in _PREDICATE_ONLY]
    asked = asked or out
    # An expense over revenue asked in words (研发费用占营收的比例) is its ratio (研发费用率:
    # the vocabulary's 费用率 is 占营业收入); the share word after it asks nothing more.
    ratios = [_EXPENSE_SHARE.sub(r"\1率", piece) for piece in asked]
    if ratios != asked:
        return [r for r in ratios if r not in _SHARE_WORDS]
    return asked


def states(phrase: str, text: str) -> bool:
    """Does ``text`` state ``phrase`` — verbatim, through a declared synonym (LEXICON), or by
    pieces covering at least 60 % of it, its head included? A Chinese phrase ends with its
    head: one whose last character no stated piece covers names another thing (董事长 is
    not stated by 董事会, 换手率 not by 换手, 电池产能 not by 电池销量)."""
    phrase, text = counted(phrase), counted(text)
    if phrase and not phrase.endswith("率"):
        # 研发费用率 is a ratio, not the 研发费用 it is of: the longer word's head is 率
        text = text.replace(f"{phrase}率", "|")
    if not phrase or phrase in text:
        return True
    mask = _mask(phrase, text)
    if sum(mask) / len(phrase) < 0.6:
        return False
    return mask[-1]


_EXPENSE_SHARE = re.compile(r"^(.{1,8}费用)占(?:营收|营业收入|收入)的?(?:比例|比重|占比)?$")


# What a figure is of another (its change, its share) — a follow-up asking only this
# (同比增长多少？) asks it of the earlier question's topic.
_ATTRIBUTE = re.compile(
    r"(?:同比|环比|增长率?|下降|增加|减少|提高|降低|变化|变动|增减|占比|比例|比重|增速|幅度)+"
)


def is_attribute(phrase: str) -> bool:
    return bool(_ATTRIBUTE.fullmatch(fold(phrase)))


def leading_unstated(phrase: str, text: str) -> int:
    """How many characters at the start of ``phrase`` no piece of ``text`` states: the
    modifier a phrase names its thing by (西北区域仓储面积 over a row of 华东)."""
    mask = _mask(counted(phrase), counted(text))
    return next((i for i, stated in enumerate(mask) if stated), len(mask))


def without_share_wholes(text: str) -> str:
    """``text`` with the wholes its shares are taken of left out (占员工总数的 18.2% →
    18.2%): the share states a part, not the whole."""
    return _SHARE_OF.sub("", text)


def enumerates(text: str) -> bool:
    """Whether a sentence names several things: items joined by 、 or ；, or by 与 / 和 / 及."""
    return bool(_ENUMERATION.search(text))


# -- documents and entities ---------------------------------------------------------------


def entity_of(title: str) -> str:
    """Who a document is about, from its title: the title before its date or bracket."""
    name = _TITLE_TAIL.sub("", title).strip()
    return name or title.strip()


def short_name(entity: str) -> str:
    """How a reader names the entity: 北辰医药 for 北辰医药股份有限公司."""
    for tail, replacement in (
        ("股份有限公司", ""),
        ("有限责任公司", ""),
        ("有限公司", ""),
        ("型证券投资基金", "基金"),
        ("证券投资基金", "基金"),
    ):
        if entity.endswith(tail) and len(entity) > len(tail) + 1:
            return entity[: -len(tail)] + replacement
    return entity


def cn_number(numeral: str) -> int:
    """一 → 1, 十 → 10, 十二 → 12, 二十三 → 23."""
    if "十" not in numeral:
        return _CN_DIGITS.get(numeral[-1], 0)
    tens, _, ones = numeral.partition("十")
    return 10 * (_CN_DIGITS.get(tens, 1) if tens else 1) + _CN_DIGITS.get(ones, 0)
