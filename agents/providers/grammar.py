"""The grammar of a question, apart from what it asks about: question words and particles,
counts with their measure words, comparatives and superlatives, time qualifiers, the verbs
that link a thing to its value, and the words that ask for a figure, a share, a list or
each. ``agents.providers.reading`` cuts these out of a question before it reads its topic
(docs/extractive-provider.md, "Reading the question"). Also the one home of the words of a
change (RISE, FALL, UNSIGNED_CHANGE …), which the reader's modules compose their patterns
from with ``words`` / ``words_re``. Data, and those two builders only.
"""

import re

from knowledge.periods import PERIOD_WORDS

# A question that starts with a third person's pronoun (她获授多少万股？) asks about whoever
# the question before it asked for.
PRONOUNS = ("他", "她", "它")
# A follow-up that asks a part of the whole the question before asked (其中寿险分部贡献了多少？
# after 归母净利润是多少？: the segment's 归母净利润).
PART_LEAD = "其中"
# Every item of what the thing named before says (汽车电子的各项指标, 研发费用各项数据): its
# whole row or passage, as 情况 asks. 各项 with a generic head names no figure of its own,
# and its 各 counts the one thing's items, not each of many things (EACH).
ALL_ITEMS = ("各项指标", "各项数据")
# Question words and particles: they carry no subject.
QUESTION_WORDS = (
    "是多少",
    # a date asked (什么时候成立)
    "什么时候",
    "何时",
    "哪一天",
    "哪天",
    # a percent asked (占总股本的百分之几)
    "百分之几",
    "百分之多少",
    "有多少",
    "能拿到多少",
    "是谁",
    "谁",
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
    # a classifier after the question word names the answer's form, not its subject
    # (评级是什么级别: AA 类; 哪个等级 is MEASURE's)
    "什么级别",
    "什么等级",
    "什么类别",
    "什么档次",
    "什么",
    "怎么样",
    "怎样",
    "怎么",
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
    # the occasion or the document pointed back to (这次定增, 这份业绩预告, 这期限制性股票:
    # a plan's round)
    "这次",
    "这份",
    "那份",
    # a note pointed back to (岚峰证券这篇综述)
    "这篇",
    "那篇",
    # a table's row pointed to by the name it is asked of (估值表中溪南银行那一行)
    "那一行",
    "这一行",
    "这一期",
    "这期",
    "这一轮",
    "这轮",
    # the term of office pointed back to (新一届的总经理, 本届董事会): the board the document
    # elects, like 这期
    "新一届",
    "这一届",
    "本届",
    "这届",
    "该公司",
    "这家",
    "介绍一下",
    "说说",
    "一下",
    "分别",
    "各自",
    "情况",
    *ALL_ITEMS,
    # each of a kind's items (各项费用分别是多少: every 费用 row), like 各 before a measure word
    "各项",
    "具体",
    # verbs that introduce the enumeration asked for (分成哪几类, 包括哪些)
    "分成",
    "分为",
    "包括",
    "包含",
    # an intention asked (定增打算募多少钱): a report writes the plan as 拟…, the figure is
    # the plan's
    "打算",
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
QUESTION_WORDS_LONGEST = tuple(sorted(QUESTION_WORDS, key=len, reverse=True))
# Single characters that separate terms when they stand between them.
PARTICLES = set("的了吗呢吧呀么和与及或、，,。？?！!：:；;（）()「」“”\"' \t\n")
# Leading words of an elliptical follow-up.
FOLLOW_UP_LEAD = ("那么", "那", "还有", "另外", "再看", "再问", "同期", PART_LEAD, *PRONOUNS)
# Time qualifiers: they rank sentences; a year must also be found. The periods are
# knowledge/periods.py's words (one home: 三季度, 上半年, 年初至报告期末, 上年同期, 1—9 月…),
# after a year with its 年 / 年度; besides them, the relative times a question is asked in.
TIME = re.compile(
    # (a year a broker's table marks actual or forecast, 2025A, 2027E, is that year)
    # (a year's end after it, 2025年末 / 2025年底: the balance's date, one time)
    r"(?:(?:19|20)\d{2}(?:[AEae](?![A-Za-z])|\s*年?(?:度)?(?:[末底](?!期))?))"
    rf"|{PERIOD_WORDS}"
    # the year's end (年底: a balance's date, 年末; 比去年年底 is against the year before's
    # end, not the year-on-year period)
    r"|(?:(?:比|较)?(?:去|上一?)年)?年[底末]|(?:比|较)?(?:去|上一?)年底"
    r"|(?:单季度?|累计|去年|上一?年(?:度?末|度)?|今年|本年度?|当年|报告期末|本报告期|报告期内|本期末|期末"
    r"|本期(?!末)"
    # the present and the quarter a question is asked in (现在, 这个季度): the report's own
    r"|现在|目前|当前|眼下|如今|这一?个?季度?|本季度?|当季度?"
    # the period asked before (同期的业绩比较基准收益率呢？): the conversation's
    r"|同期)"
)
# A count or an interrogative with its measure word (两只, 几家, 哪几类, 哪些): grammar of
# the question, not what it asks about.
MEASURE = re.compile(
    r"哪[些几一]?[个种]?(?:类别|种类|类型|级别|等级|档次)|哪(?:些|几位|几个)人"
    # a place asked by its kind (总部在哪个城市, 位于哪个省份): where, like 在哪里 — the kind
    # names the answer's form, not what is asked
    r"|哪(?:一?个|座)?(?:城市|省份|省|国家)(?=[的呢吗？?，,。!！]|$)"
    # (有 before the question word is the verb of having, grammar like 有多少: 华南片区有几台…
    # names no doer of an act)
    r"|(?:(?<![前第])(?:有?几|[两二三四五六七八九十])|哪[几一]?|有?多少)"
    r"(?:部分|方面|[只家个条台辆项类种位名块些户])(?!月)"
    # a top N by a measure (占比前三的: TOP_COUNT)
    r"|(?<=[^\W\d_])前[\d一二三四五六七八九十]{1,2}(?=的)"
    # (哪天, 哪一天 ask a date: QUESTION_WORDS)
    r"|哪(?!一?天)"
    # a comparative question: 谁更大, 哪个更高
    r"|(?:谁|哪个|哪家|哪只)更?[高大低小多少快慢好]|更[高大低小多快慢好]"
)
YEAR = re.compile(r"(?:19|20)\d{2}")
# Single characters that are grammar at a phrase's edge, not part of what is asked
# (创新药收入在…中占多大比重 → 创新药收入, 比重).
# Heads that name the form of an answer, not its subject (收入规模 asks for 收入, 业务构成
# for 业务): dropped from the end of a phrase that keeps two characters.
# A bound (募集资金总额上限, 比例上限) asks the thing in the form a plan writes its cap in
# (不超过 120,000.00 万元): the thing is what is asked.
# A count (冷藏车数量 asks how many 冷藏车: 冷藏车辆 745 台) is the form the thing is given
# in — unless the excerpts write the count's head as a name's (a column's 获授的限制性股票数量
# （万股）): then it is part of what is asked, as written (reading.topic_phrases).
COUNT_HEADS = ("数量", "数目")
LIGHT_HEADS = (
    "规模",
    "构成",
    "方案",
    "水平",
    "情况",
    "数据",
    "因素",
    "方面",
    "口径",
    # a forecast's range (扣非净利润预告区间: 预计 … 至 …) is the form its figure is given in
    "区间",
    *COUNT_HEADS,
    # the members of a body (审计委员会成员: 审计委员会由…组成) are what it is made of
    "成员",
    "点",
    # a table named by what it lists (非经常性损益表里: the section 非经常性损益项目和金额)
    # is where to look — a table the excerpts name so (利润表) keeps it, written whole
    "表",
    "上限",
    "下限",
)
# Modifiers that rank what is asked, not name another thing (主要风险 asks the 风险 a report
# lists under 风险提示): dropped from the start of a phrase that keeps two characters.
LIGHT_MODIFIERS = ("主要",)
# The head of a relative clause standing alone (政府补助（计入损益的部分）: the part of the
# thing named before it that the clause says): it names nothing of its own. (预留部分, a
# name written whole, keeps it.)
RELATIVE_HEADS = ("部分",)
# Words for a document (研报, 公告, 预案, a broker's 点评 / 综述…): a phrase ending with one (海岳证券研报里) names
# where to look, not what is asked of it.
# A verb of saying after it (研报里说, 公告称, 年报中提到) goes with it: the lead-in of a
# question that quotes a document.
DOCUMENT_WORD = r"(?:研报|研究报告|报告|公告|预案|点评|综述|纪要|财报|摘要|季报|年报)"
DOCUMENT_WORDS = re.compile(
    DOCUMENT_WORD + r"(?:[里中内上]?(?:说|称|讲|写|写道|提到|显示|指出|表示))?$"
)
# -- the words of a change: their one home -----------------------------------------------
# The modules of the reader compose their patterns from these names (``words``,
# ``words_re``); where a composition leaves a group out or adds to it, the difference is a
# principle, commented where it is composed.

# A rise as a report (and a question) writes it: 同比增长 6.1%, 较上年末提升 2.3 个百分点.
RISE = ("增长", "增加", "提高", "上升", "提升", "上涨")
# A fall as a report (and a question) writes it: 同比下降 3.2%, 回落至 ….
FALL = ("下降", "减少", "降低", "下滑", "下跌", "回落")
# The asker's one-character rise and fall (涨了多少, 升了多少; 跌了多少, 降了多少). 升 and
# 降 are characters of other words too (升级, 晋升, 降级), so a pattern reads them as a
# move only at the end of a phrase; 涨 and 跌 name a move wherever they stand (MOVE).
RISE_COLLOQUIAL = ("涨", "升")
FALL_COLLOQUIAL = ("跌", "降")
MOVE = ("涨", "跌")
# A change written without its sign, which its figure carries: a column 本期比上年同期增减(%),
# 变动（%）, 涨跌; a question's 变化了多少, 升降.
UNSIGNED_CHANGE = ("增减", "变动", "变化", "升降", "涨跌")
# The nouns of the rate of a rise (增幅, 涨幅) and of a fall (降幅, 跌幅), and all the
# nouns of a rate of change (营收增速, 变动幅度, 净利润增长率 too).
RISE_RATE = ("增幅", "涨幅")
FALL_RATE = ("降幅", "跌幅")
RATE_OF_CHANGE = ("增速", "幅度", "增长率", *RISE_RATE, *FALL_RATE)
# A spread's or a gap's change (息差收窄, 差距扩大), a rate's or a yield's move (收益率下行).
SPREAD_CHANGE = ("收窄", "扩大")
YIELD_MOVE = ("上行", "下行")
# A change on an earlier period named by its period: 同比 (the year before), 环比 (the
# period before), and a comparison with the year before written out (比上年, 较去年).
ON_EARLIER = ("同比", "环比")
AGAINST_LAST_YEAR = r"(?:比|较)(?:上年|去年)"
# The cause of a change asked (应收账款增长的原因): a report writes it after the change it
# explains (…较上年度末增长 14.8%，主要系收入增长…所致), never before it.
CAUSE = ("原因", "主要原因", "原因说明")


def words(*groups: tuple[str, ...]) -> str:
    """The words of ``groups`` as one non-capturing alternation, longest first (a word is
    never cut short by another it begins with: 增长率 before 增长)."""
    unique = dict.fromkeys(w for group in groups for w in group)
    ordered = sorted(unique, key=len, reverse=True)
    return "(?:" + "|".join(re.escape(w) for w in ordered) + ")"


def words_re(*groups: tuple[str, ...], prefix: str = "", suffix: str = "") -> re.Pattern[str]:
    """``words`` of ``groups`` compiled, between the regex ``prefix`` and ``suffix``
    (``suffix="$"``: a phrase that ends with one of them)."""
    return re.compile(prefix + words(*groups) + suffix)


# Verbs that link the thing asked to its value or its holder, not part of the thing:
# 冷链仓储面积达到(了多少), 半年报提到(了哪些风险), 收益率下行到(多少), 持有华岳银行(的比例).
PREDICATE_AFTER = re.compile(
    # (a modal before the verb goes with it: 净利润增速要达到, 需达到, 须达到; and one of
    # what will be, 持股比例会降到, 将降至, 占比能到 — not 董事会's or 大会's 会, 产能's 能)
    r"(?:需要|必须|应当|须|需|(?<![主重纲摘概想只])要|(?<![董事员机社学开理协约都大委总分工商议年晚])会|(?<![即必])将|(?<![产功性动效储节智技职可才体热电光核风赋本潜])能)?"
    r"(?:达到|做到|提到|提及|列出|列了|列举|披露了?|录得|来自|投向|用于|到|达"
    # a direction to the level reached (收益率下行到, 降到了多少, 回落至, 增至): any rise or
    # fall, a yield's 上行 / 下行, and the one-character ones, 增 and 减 as a report writes
    # them before 至
    + "|"
    + words(RISE, FALL, YIELD_MOVE, RISE_COLLOQUIAL, FALL_COLLOQUIAL, ("增", "减"))
    + r"(?:到|至)"
    # verbs of a rating given (澄远人寿评了几类, 被评为哪一级)
    r"|(?<![点测好差书影短时复互总股品])被?评(?:了|为)?|获评"
    # verbs of obtaining and of reaching a stage (拿到了多少首付款, 几个项目进了三期临床)
    r"|拿到|拿了?|收到|得到|获得|取得|进入|处于|(?<![先改引推促增跟])进"
    # verbs of spending on the thing (研发花了多少钱, 研发投了多少)
    r"|花了?|花费|花掉|用了|(?<!定)投了?"
    # a part's share in a whole (寿险分部贡献了多少)
    r"|贡献"
    # verbs of an appointment after the post (总经理聘的是谁, 董事长选的谁): the post is asked
    r"|(?<![招解续返])聘(?:任|请|用)?|任命|委任|选举|(?<![人候挑精])选"
    # verbs of a note listing or writing what is asked (风险提示都列了哪些, 哪位分析师写的)
    r"|(?<![系序行并排陈队数])列|撰写|编写|(?<![书描编撰速填改抄缩简])写"
    # verbs of where a thing is (总部设在哪, 工厂坐落在哪个城市): the place is asked, the
    # verb is no word of the thing (设 of 建设, 开设, 下设 is part of another verb)
    r"|(?<![建假开增预陈铺架新创下分附内常特装敷拟虚])设|坐落"
    # holding (持有多少股: 有多少 is the question word)
    r"|(?<![支维保坚扶主])持)$"
)
# A phrase that is only such a verb (远川冷链列举了哪些风险 → 列举; 面临的风险 → 面临) asks
# nothing of its own when the question asks something else.
# Verbs of a report mentioning what is asked (三季报提示了哪些风险): no topic to rank by.
MENTIONING = frozenset(["列举", "列出", "提到", "提及", "披露", "提示"])
# A report warning its readers (公司提醒投资者注意哪几项风险, 提请投资者关注): a verb of
# mentioning, with the company that warns and the investors warned — what is asked is what
# they are told to note.
WARNING = re.compile(
    r"(?:本?公司|管理人|管理层|董事会)?(?:提醒|提请|提示|请)(?:广大)?投资者(?:注意|关注|留意)?"
)
PREDICATE_ONLY = MENTIONING | frozenset(
    [
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
# An amount asked of an act (董事会批|了多少|闲置募集资金做现金管理): 了 and the question
# word follow the act's verb, and what comes after them is the thing measured.
ACT_ASKED = re.compile(r"了?(?:多少|几)(?P<measured>[^？?。，,！!；;\s]*)")
# An intention before the act asked (募来的钱准备投哪几个项目: 准备 before a verb of the
# grammar, like 打算): a report writes the plan as 拟…. 准备 is a noun where something else
# follows it or the excerpts write it glued to its neighbour (减值准备, 准备金).
INTENTION = "准备"
# The money an act brought (募来的钱, 融到的钱): the trade writes it as the act's 资 (募资,
# 融资, 筹资).
MONEY_OF_ACT = re.compile(r"(?P<verb>[^\W\d_])[来到得]的(?:钱|资金)")
# Who a document is by (a broker, the author of its note): a name before a coverb of giving
# (岚峰给溪南银行的目标价: the note gives it) in a question asking a judgement (JUDGEMENT;
# a lender's 向公司提供的借款 is none), and one right before a word pointing to a document
# (岚峰证券这篇…综述).
GIVER = re.compile(r"^(?P<who>[^|]{2,}?)[给向](?=.{2})")
DOCUMENT_POINTERS = ("这篇", "那篇", "这份", "那份")
# The head words a segment's name ends with (汽车电子业务, 仿制药板块): a table's row
# label leaves them out (汽车电子 | 96.5 | …).
SEGMENT_HEADS = "板块|业务|分部|事业部|产品线"
# A segment's name and what is asked of it, 的 between them or not (汽车电子业务的毛利率 is
# 汽车电子业务毛利率): one phrase, read as the glued one is.
SEGMENT_OF = re.compile(rf"(?<=[^\W\d_]{{2}})({SEGMENT_HEADS})的(?=[^\W\d_])")
# A segment head after 各 or a question word (各分部营业收入, 哪个业务的毛利率最高, 哪几个
# 业务的收入增长了) names no segment: it is the kind of the rows asked, each of them or the
# ones asked for (the table's label column, 分部 | 营业收入 | …), and what is asked of them
# starts after it. (Two heads glued, 哪几个业务分部, are one word: the kind, asked whole.)
EACH_SEGMENT = re.compile(
    rf"(?P<kind>(?:各|每个|哪一?个|哪几个?|哪些|哪)(?:{SEGMENT_HEADS}))(?!{SEGMENT_HEADS})的?"
)
# Every year asked in turn (各年度营业收入增长率考核目标, 每年的…): each row of a table of years,
# not a period the figure is of — the rows' years are its cells (考核年度 | 2027 年).
EACH_YEAR = re.compile(r"(?:各|每一?个?|历)年度?(?![底末初])")
# Who judges or forecasts a company, addressed to it (海岳对泊川…的预测): a name before 对
# and the company's name, in a question asking a judgement (a holder's 对…的持股比例 is none).
ADDRESSER = re.compile(r"^(?P<who>[^|]{2,}?)对(?=.{2})")
JUDGEMENT = re.compile(r"预测|预期|评级|目标价|估值|判断|看法|观点|测算|估计")
# Who forecasts or judges what is asked (海岳证券预测泊川…): a name before a verb of
# forecasting or judging, with more after it.
FORECASTER = re.compile(r"^(?P<who>[^|]{2,}?)(?:预测|预计|认为|估计|测算|判断|看好)(?=.)")
# A verb of purpose between the thing and its use (闲置募集资金做现金管理, 募集资金用于…):
# two things asked, each stated on its own.
PURPOSE = re.compile(r"用于|用来|用作|拿来|拿去|做")
# (a post held: 当, 做 — 聘了谁做总经理 — like 担任; 做市 is a trade of its own)
# (a stage reached, before what reached it: 进入三期临床的项目 asks the 三期临床 项目 — a
# report writes 处于三期临床阶段)
PREDICATE_BEFORE = re.compile(r"^(?:持有|拥有|担任|出任|当|做(?!市)|进入|处于)(?=..)")
# By how much a thing beat another (跑赢基准多少): what it is compared with is asked, the
# verb is not — when a figure is asked (跑赢基准了吗 asks a judgement no excerpt writes).
OUTPERFORMED = re.compile(r"^(?:跑赢|跑输|超越|超过|落后于?)(?=..)")
# The margin asked of such a verb (跑赢基准多少, 落后同类几个百分点): the difference of the
# thing and what it is compared with — never what it is compared with on its own.
BEATEN_BY = re.compile(
    r"(?:跑赢|跑输|超越|超过|落后于?)[^，,。？?！!；;]{1,16}?(?:多少|几个?百分点)"
)
# A comparison written 比 X 高 (净值增长率比基准高多少): X is what the thing is compared
# with, 比 and the comparative are grammar (not 比例, 比重, 占比, 同比, 环比, 对比, 比较, nor
# 比年初: a balance's change since the year's start, the vocabulary's 较上年末).
COMPARED_WITH = re.compile(
    r"(?<![占同环对])比(?![例重率较]|年初)(?P<other>(?:比较|[^，。？?！!比|]){1,16}?)(?:更|还)?"
    r"[高低大小多少快慢](?:出|了)?"
)
# What a figure is taken relative to (相对业绩基准的超额收益): a coverb before what the figure
# is measured against, 的 after it — both are asked, the coverb is not (相对收益 is a name).
RELATIVE_TO = re.compile(r"相对于?(?P<other>[^，。？?！!|的]{2,16}?)的")
# A question that compares two things of one entity (净利润率与资产负债率哪个高, 净利润增速
# 比营收增速高多少, 相差多少): the answer ends with which is higher and by how much.
COMPARES = re.compile(
    r"(?<![占同环对])比(?![例重率较]|上年|去年|上期|年初)"
    r"|(?:哪个|哪项|哪一?家|哪只|哪一个|谁)更?[高大低小多少快慢]"
    r"|(?:哪个|哪项|哪一?家|哪只|哪一个|谁)[^，。？?]{1,8}?[高大低小快慢]"
    r"|更[高大低小多快慢好]|相差|差[了距额]|差多少|高出|多出|对比|比较|相比|孰"
)
# How many things (几项风险, 多少个项目), not how much (多少钱).
# (a vehicle's or a machine's measure word — 辆, 台 — counts the things as 个 does: 冷藏车辆
# 1,870 台 answers 多少辆冷藏车)
COUNTS = re.compile(r"(?:几|多少)(?:部分|方面|[只家个条项类种位名块辆台])")
# A count or a which with its measure word (三家, 哪家, 各家, 几只): the noun after it names
# things of a kind asked among (三家银行的目标价, 哪家银行 PE 最高), not one document's entity;
# before a superlative (三家银行中谁…最低) its members are compared.
AMONG_KIND = r"(?:[\d两二三四五六七八九十几]+|哪一?|各)[家只个位]"
# A superlative asked over a table's rows (哪个区域…最高): the row with the extreme value.
SUPERLATIVE = re.compile(r"最(?P<high>高|大|多|快|好)|最(?P<low>低|小|少|慢|差)")
# How many of the top rows a superlative asks (获授股数最多的三位高管: the three highest).
# A top N by the measure before it (占比前三的品种): the N highest.
TOP_COUNT = re.compile(
    r"最[高大多快好低小少慢差]的?(?P<n>[\d两二三四五六七八九十]{1,2})[位个只家项名种类]"
    r"|(?<=[^\W\d_])前(?P<first>[\d一二三四五六七八九十]{1,2})(?=的)"
)
EDGE_FUNCTION = set("在中占对于从向把被将给让以里内其是为有由各都")
# Grammar at a phrase's start only: 所 before a verb (是哪家所审阅的, 为…所持有) is the
# particle of 所V的, not a word of what is asked (事务所, 交易所 end with it).
LEAD_FUNCTION = set("所")
# A request to list (列一下, 列出, 列举, 罗列) opening the question, after a polite lead
# (请, 帮我, 麻烦): what it names is asked as 哪些 asks it.
LIST_REQUEST = r"|^(?:请|麻烦)?(?:帮我|给我)?(?:列一下|列出|列举|罗列)"
ENUMERATES = re.compile(
    r"哪些|哪几|都有什么|都是什么|都有谁|都是谁|(?:包括|包含|涵盖|提示|提到|提及|列举|列出|列|披露)(?:了)?什么|分别|名单|列表"
    r"|几[只个家位名条项类种块][^，。？?!！]{0,12}?(?:是什么|是谁|是哪|叫什么|有什么)"
    r"|前[\d一二三四五六七八九十]+[名大]|(?<!哪)几[项类种]" + LIST_REQUEST
)
SHARE_WORDS = ("比例", "比重", "占比")
# The year-ago period named as a period (那去年同期呢？, 上年同期的销售费用): its own figure is
# asked, not a change on it — unless the question also asks a change (CHANGE).
PRIOR_PERIOD = re.compile(r"(?:上年|去年)同期|上期")
# 去年 before a part of the year (去年三季度, 去年上半年) names that part a year back: of a
# report on this year's part, the year-ago period (YOY), not the report's own.
YEAR_BACK = re.compile(
    r"(?:上年|去年)(?=第?[一二三四1-4]季度|[上下]半年|前三季度|[Qq][1-4]|[Hh][12])"
)


# A question that asks a change (同比增长多少, 上年同期提升了多少, 增幅, 涨了多少): the
# directions, the unsigned change, its rate, its period and 涨 / 跌 anywhere — a lone 升 /
# 降 is no change asked anywhere in a question (升级, 降级), only at a phrase's end
# (structure's change asked).
CHANGE = re.compile(
    words(ON_EARLIER, RISE, FALL, UNSIGNED_CHANGE, RATE_OF_CHANGE, MOVE) + "|" + AGAINST_LAST_YEAR
)
# Asks which ones (a list of things), not how much of each. What a report includes or
# mentions (包括什么, 三季报提示了什么风险, 年报里列了什么) is all it lists, as 哪些 asks.
WHICH = re.compile(
    "(?:"
    r"哪些|哪几|都有什么|都是什么|都有谁|都是谁|(?:包括|包含|涵盖|提示|提到|提及|列举|列出|列|披露)(?:了)?什么"
    # a count whose things are named (持仓最多的几只股票是什么, 前三大股东是谁): which ones
    r"|(?:几[只个家位名条项类种块]|前[\d一二三四五六七八九十]+[名大])"
    r"[^，。？?!！]{0,12}?(?:是什么|是谁|是哪|叫什么|有什么)"
    # or a ranked count whose noun ends the question, nothing asked after it (帮我查一下…的
    # 前三大股东, 列出前五名重仓股): the noun phrase names the things wanted — not a figure
    # of them (前五大客户销售额占营收比例)
    r"|前[\d一二三四五六七八九十]+[名大][^\W\d_]{1,5}(?<![占比额率量值数])[。？?!！]*$"
    # or a request to list, whatever it names (列一下…的经营分部, 请列出…): a list is asked
    + LIST_REQUEST
    + ")"
)
# Asks for a number: how much, how many, how large.
ASKS_FIGURE = re.compile(r"多少|百分之几|多大|多高|多长|多久|(?<!哪)几[个家只条项台人名位次年倍]")
# Asks who or which one (谁是财务总监, 哪家银行评级为买入): a table answers it by a row's
# label, found by what its other cells say.
WHO_OR_WHICH = re.compile(r"谁|哪(?:一)?[位个家只名些]")
# Asks the day of something (股权登记日是哪天, 几月几号): a date is the answer, written as a
# report writes one (2027 年 5 月 20 日, 2027/5/20, 5 月 20 日).
ASKS_DAY = re.compile(r"哪一?天|哪一日|几号|几月几[日号]")
WRITES_DATE = re.compile(
    r"\d{1,2}\s*[日号]|\d{4}\s*[/.-]\s*\d{1,2}\s*[/.-]\s*\d{1,2}|\d{1,2}\s*/\s*\d{1,2}"
)
# A figure asked in a scale of its own (多少亿, 几千万): the form the answer is wanted in.
SCALE_ASKED = re.compile(r"(?:多少|几)(?P<scale>千万|百万|万|亿)")
# Asks for a share (占…, 比例, 比重, 占比): the whole a share is of is then part of it.
EACH = re.compile(rf"各(?!{'|'.join(a[1:] for a in ALL_ITEMS)})|分别|每个|每一")
# (an expense ratio: a share of revenue; a holding's weight: its share of the fund's net assets)
ASKS_SHARE = re.compile(r"占|比例|比重|份额|仓位|权重|费用率")
QUANTITATIVE = re.compile(r"多少|几|比例|占比|[率额]|规模|金额")


# A top-N count (前五名, 前三大, 前10名): compared as one form, 前N — the question's
# 前三大重仓股 is the report's 前三名股票 (the vocabulary prints 重仓股 as 前五名股票).
# A question's term cut before its measure word (前十|大股东: the corpus writes 前十名) ends
# with the count alone: 前十 is that count too.
COUNT = re.compile(r"前\s*[\d一二三四五六七八九十]+\s*(?:[名大位]|$)")
