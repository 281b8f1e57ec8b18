"""How the extractive provider quotes what answers: a unit whole or the clause stating a
figure, a list's picked item, table rows with their header (wide tables by the cells
asked). Quoted text is verbatim from its excerpt, so every figure before a marker is in
that marker's excerpt.
"""

from __future__ import annotations

import re
import unicodedata

from agents.providers.selection import MAX_QUOTED_CELLS
from agents.providers.sources import Source
from agents.providers.structure import Unit, cells_asked, marker, row_cell
from knowledge.figures import figures_in, value_spans


def clause_with(unit: Unit, display: str) -> str:
    """The clause of ``unit`` that states ``display`` (the value as a handle renders it)."""
    figures = figures_in(display)
    if not figures:
        return unit.text
    for clause in unit.clauses or [unit.text]:
        if value_spans(clause, figures[0].value, figures[0].unit):
            return clause.rstrip("；;，,")
    return unit.text


def unit_stating(source: Source, display: str) -> Unit | None:
    figures = figures_in(display)
    if not figures:
        return None
    for unit in source.units:
        if unit.kind != "heading" and value_spans(unit.text, figures[0].value, figures[0].unit):
            return unit
    return None


def quote_rows(rows: list[Unit], phrases: tuple[str, ...] = ()) -> str:
    """Several rows of one table the question names: each row's cell asked for, then the
    header and the rows quoted whole, every cell verbatim."""
    if len(rows) == 1 or len(rows[0].clauses) > MAX_QUOTED_CELLS:
        return "\n".join(quote_unit(r, phrases) for r in rows)
    if rows[0].header_from:
        # The header is another excerpt's: quoted once with its citation, then the rows and
        # their cells, which the rows' own citation follows — no other marker between.
        return "\n".join(quote_unit(r, phrases) for r in rows[:1]) + "".join(
            f"\n  {r.text}" + _cell_line(r, phrases, "\n") for r in rows[1:]
        )
    header = rows[0].heading.split(" | ")
    lines = []
    for row in rows:
        column = row_cell(row, phrases)
        if 0 < column < len(row.clauses) and column < len(header):
            lines.append(f"{row.clauses[0]}（{header[column]}）：{row.clauses[column]}")
    table = "\n  ".join(
        [f"表格：{rows[0].header_text or rows[0].heading}", *(r.text for r in rows)]
    )
    return "\n".join([*lines, table]) if lines else table


def _cell_line(row: Unit, phrases: tuple[str, ...], before: str) -> str:
    """A row's cell the phrases ask for, named by its label and column (unless the header
    names a number, which another excerpt states — a column's mark ① is the number 1 once
    folded, as a reader of the figures reads it), or ""."""
    column = row_cell(row, phrases)
    header = row.heading.split(" | ")
    named = unicodedata.normalize("NFKC", header[column]) if 0 < column < len(header) else ""
    if 0 < column < len(row.clauses) and named and not re.search(r"\d", named):
        return f"{before}{row.clauses[0]}（{header[column]}）：{row.clauses[column]}"
    return ""


def picked_item(unit: Unit, ordinal: int) -> str:
    """A ranked list's item ``ordinal`` (第一大重仓股 → 1. …) with its lead-in, or ""."""
    if unit.kind != "list" or ordinal < 1:
        return ""
    items = [c for c in unit.clauses if (marker(c) or ("", 0))[1] == ordinal]
    if not items and 0 < ordinal <= len(unit.clauses) and not any(map(marker, unit.clauses)):
        items = [unit.clauses[ordinal - 1]]
    if len(items) != 1:
        return ""
    lead = unit.text.split("\n", 1)[0]
    return items[0] if lead in unit.clauses else f"{lead}\n{items[0]}"


def quote_unit(unit: Unit, phrases: tuple[str, ...] = ()) -> str:
    """A unit as written: a list keeps its lead-in and every item on their own lines; a
    table row is answered by the cell the question asks for (its row label and column
    header), then quoted whole with its header — every cell verbatim."""
    if unit.kind == "row" and unit.header_from:
        # The header is another excerpt's: quoted with its own citation, the cell asked
        # after it (unless the header names a number, which that excerpt states).
        quoted = (
            f"表格：{unit.header_text or unit.heading} [[cite:{unit.header_from}]]\n  {unit.text}"
        )
        return quoted + _cell_line(unit, phrases, "\n")
    if unit.kind == "row":
        columns = cells_asked(unit, phrases)
        quoted = f"表格：{unit.header_text or unit.heading}\n  {unit.text}"
        if columns:
            header = unit.heading.split(" | ")
            cell = "\n".join(
                f"{unit.clauses[0]}（{header[c]}）：{unit.clauses[c]}" for c in columns
            )
            # A wide table's row is answered by its cell alone (a record of 500 columns is
            # not an answer to read).
            return cell if len(unit.clauses) > MAX_QUOTED_CELLS else f"{cell}\n  {quoted}"
        return quoted
    return unit.text.rstrip("；;，,") if unit.kind == "clause" else unit.text
