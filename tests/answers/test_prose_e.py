"""Question words and paraphrases over prose, as a fifth hand asked them: a segment asked by
the accounting standard's word. One test per rule, each on a document of its own (not the
sets' fixtures), driven without a database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

INSURER = excerpt(
    "汀澜保险集团股份有限公司 2027 年年度报告摘要",
    "三、分部经营情况\n单位：人民币百万元\n"
    "分部 | 营业收入 | 分部净利润\n"
    "人寿保险 | 96,310.52 | 6,204.17\n"
    "健康保险 | 21,845.06 | 1,388.40\n"
    "资产管理 | 2,917.33 | 704.81\n"
    "合计 | 121,072.91 | 8,297.38",
)


def test_a_vocabulary_word_is_stated_by_its_expansion_whatever_order_the_report_writes():
    # 经营分部 → 分部 (knowledge/vocabulary.py): the heading's 分部经营情况 writes 经营 and 分部
    # the other way round, which does not make the table's 分部 another thing
    # (reading.states)
    first = answer("汀澜保险分哪几个经营分部披露？", [INSURER])[0]
    for segment in ("人寿保险", "健康保险", "资产管理"):
        assert segment in first, first
    assert f"[[cite:{INSURER['id']}]]" in first, first
    assert not_found(answer("汀澜保险分哪几个经营区域披露？", [INSURER]))
