"""Headings, glued names and the author of a note (docs/extractive-provider.md, "Rules read
from the evaluation rounds"): each rule on a small document of its own, driven without a
database (tests/answers/reader.py)."""

from tests.answers.reader import answer, excerpt, not_found

# -- a name before 给 / 向 is a note's author only where a judgement is asked ----------------

LOANS = excerpt(
    "澍桥科技股份有限公司 2026 年半年度报告摘要",
    "一、公司基本情况\n\n截至报告期末，公司控股股东为澍桥控股集团有限公司，持有公司 32.15% 的股份。\n\n"
    "二、关联交易\n\n报告期内，公司向全资子公司澍桥精密提供的借款余额为 8,600 万元，"
    "利率参照同期贷款市场报价利率。",
)


def test_a_lender_before_向_is_no_author_when_no_judgement_is_asked():
    # (the company's own loan to its subsidiary is not the controlling holder's to it)
    blocks = answer("控股股东向公司提供的借款余额是多少？", [LOANS])
    assert not_found(blocks) and "8,600" not in blocks[0]


def test_a_lender_before_给_is_no_author_when_no_judgement_is_asked():
    blocks = answer("控股股东给公司提供的借款余额是多少？", [LOANS])
    assert not_found(blocks) and "8,600" not in blocks[0]
