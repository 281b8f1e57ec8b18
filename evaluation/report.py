"""The evaluation's tables, as text: one column per set and the total; with two agent
versions, side by side with the questions each newly passes or fails."""

from __future__ import annotations

from typing import Any

from evaluation.runner import Evaluation, Result, summarize
from evaluation.sets import EvaluationSet

ROWS: list[tuple[str, str]] = [
    ("questions", "questions"),
    ("passed", "questions passed (every check)"),
    ("fact_hit", "expected fact in first block"),
    ("fact_items", "  expected items found"),
    ("whole_lists_tables", "lists and tables answered whole"),
    ("not_found", "not found, nothing verified"),
    ("false_not_found", "answerable answered not found"),
    ("figure_precision", "figure precision"),
    ("verified_rate", "VERIFIED rate"),
    ("citations_per_answer", "citations per answer"),
    ("unused_retrieval", "unused retrieval"),
    ("document_accuracy", "cited document"),
    ("page_accuracy", "cited page"),
    ("first_block_p50_s", "first block p50 (s)"),
    ("first_block_p95_s", "first block p95 (s)"),
    ("run_p50_s", "run time p50 (s)"),
    ("run_p95_s", "run time p95 (s)"),
    ("errors", "runs refused or failed to start"),
]


def cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, dict):
        if value["rate"] is None:
            return "n/a"
        return f"{value['rate']:.1%} ({value['ok']}/{value['total']})"
    if isinstance(value, float):
        return f"{value:.2f}" if value < 100 else f"{value:.0f}"
    return str(value)


def table(columns: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Measures as rows, one column per (title, summary)."""
    head = ["measure", *(title for title, _ in columns)]
    body = [[label, *(cell(summary[name]) for _, summary in columns)] for name, label in ROWS]
    widths = [max(_width(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = [_row(head, widths), _row(["-" * w for w in widths], widths)]
    return lines + [_row(row, widths) for row in body]


def _width(text: str) -> int:
    return sum(2 if ord(c) > 0x2E7F else 1 for c in text)  # CJK columns are two wide


def _row(cells: list[str], widths: list[int]) -> str:
    return (
        "| "
        + " | ".join(c + " " * (w - _width(c)) for c, w in zip(cells, widths, strict=True))
        + " |"
    )


def kinds_table(results: list[Result]) -> list[str]:
    kinds = list(dict.fromkeys(r.kind or "(none)" for r in results))
    columns = [(k, summarize([r for r in results if (r.kind or "(none)") == k])) for k in kinds]
    head = ["kind", "questions", "passed", "fact in first block", "not found ok", "figures"]
    body = [
        [
            title,
            str(s["questions"]),
            cell(s["passed"]),
            cell(s["fact_hit"]),
            cell(s["not_found"]),
            cell(s["figure_precision"]),
        ]
        for title, s in columns
    ]
    widths = [max(_width(row[i]) for row in [head, *body]) for i in range(len(head))]
    return [_row(head, widths), _row(["-" * w for w in widths], widths)] + [
        _row(row, widths) for row in body
    ]


def report(
    evaluation: Evaluation, sets: list[EvaluationSet], *, failures: bool = True
) -> list[str]:
    results = evaluation.results
    columns = [(s.name, summarize([r for r in results if r.set == s.name])) for s in sets]
    if len(sets) > 1:
        columns.append(("all", summarize(results)))
    lines = [
        f"{evaluation.target.label}: {len(results)} questions in {evaluation.seconds:.1f} s"
        + (f" ({evaluation.jobs} at once)" if evaluation.jobs > 1 else ""),
        "",
        *table(columns),
        "",
        *kinds_table(results),
    ]
    if failures:
        failed = [r for r in results if not r.passed]
        if failed:
            lines += ["", f"failed ({len(failed)}):"]
            lines += [f"  - {describe(r)}" for r in failed]
    return lines


def describe(r: Result) -> str:
    first = (r.texts[0] if r.texts else "").replace("\n", " ")
    why = []
    for name in r.failed_checks:
        if name == "expect":
            missing = [e for e, ok in r.expect if not ok]
            why.append(f"first block misses {', '.join(missing)}")
        elif name == "figures":
            bad = [f"{f.value}→{f.cite}" for f in r.figures if not f.ok]
            why.append(f"figures not in their excerpt: {', '.join(bad)}")
        elif name == "not_found":
            why.append(
                "answered" if not r.answered_not_found else f"{r.verified} VERIFIED citation(s)"
            )
        elif name == "answered":
            why.append("answered not found")
        elif name == "error":
            why.append(r.error)
        else:
            why.append(f"{name} wrong" if name != "completed" else f"run {r.status}")
    return f"{r.set}/{r.key} [{r.kind}] {'; '.join(why)} — {first[:90]!r}"


def side_by_side(first: Evaluation, second: Evaluation, sets: list[EvaluationSet]) -> list[str]:
    """Two agent versions over the same sets: the measures side by side, then the
    questions the second newly passes and newly fails."""
    a, b = summarize(first.results), summarize(second.results)
    head = ["measure", first.target.label, second.target.label]
    body = [[label, cell(a[name]), cell(b[name])] for name, label in ROWS]
    widths = [max(_width(row[i]) for row in [head, *body]) for i in range(3)]
    lines = [_row(head, widths), _row(["-" * w for w in widths], widths)]
    lines += [_row(row, widths) for row in body]
    before = {(r.set, r.key): r for r in first.results}
    gained = [r for r in second.results if r.passed and not before[(r.set, r.key)].passed]
    lost = [r for r in second.results if not r.passed and before[(r.set, r.key)].passed]
    lines += ["", f"newly passing under {second.target.label} ({len(gained)}):"]
    lines += [f"  + {r.set}/{r.key}: {r.question}" for r in gained] or ["  (none)"]
    lines += ["", f"newly failing under {second.target.label} ({len(lost)}):"]
    lines += [f"  - {describe(r)}" for r in lost] or ["  (none)"]
    return lines
