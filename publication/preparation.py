"""Publication's first four steps (publication/pipeline.py runs all eight): what a candidate
is made of before any rule about revisions or any write — intake (shape and mechanical
cleanup), source proof (each reference proven against this run's own retrieval), degrade
(what cannot be shown is withheld, exactly that part) and prepare (the rendered body within
the display bound). Nothing is written here.
"""

import json
from typing import Any

from citations.evidence import ProofReference, SourceAccess
from citations.models import NumericHandle
from publication.candidate import MAX_ID, Candidate, Reference, shaped
from publication.models import PublicationAttempt, SourceHint
from publication.receipts import (
    Outcome,
    Reason,
)
from publication.sources import SourceGraph, prefetch_references
from publication.text import (
    clean_text,
    render_content,
)
from runs.models import AgentCall, Run

# --- 1. intake ------------------------------------------------------------------


def _cell(value: object) -> str:
    return "" if value is None else clean_text(str(value))


def _extract(body: object) -> dict[str, Any]:
    """The readable body of a candidate, or an empty text when there is none.

    A text, a {type: text, text} or a {type: table, columns, rows}. Anything else
    has no safely extractable body: nothing is invented for it.
    """
    if isinstance(body, str):
        return {"type": "text", "text": clean_text(body)}
    if isinstance(body, dict) and body.get("type") == "table":
        columns = body.get("columns")
        rows = body.get("rows")
        columns = [_cell(c) for c in columns] if isinstance(columns, list) else []
        rows = rows if isinstance(rows, list) else []
        return {
            "type": "table",
            "columns": columns,
            "rows": [
                [_cell(c) for c in row] if isinstance(row, list) else [_cell(row)] for row in rows
            ],
        }
    if isinstance(body, dict) and isinstance(body.get("text"), str):
        return {"type": "text", "text": clean_text(body["text"])}
    return {"type": "text", "text": ""}


def intake_candidate(
    run: Run, agent_call: AgentCall, entry: str, body: object, replaces: object
) -> Candidate:
    if entry not in PublicationAttempt.Entry.values:
        raise ValueError(f"unknown Publication entry {entry!r}")
    if replaces is None:
        replaces = ""
    elif not isinstance(replaces, str):
        # A target that is not even text is still an attempt to modify: it fails as one.
        replaces = json.dumps(replaces, ensure_ascii=False, default=str) or "?"
    candidate = Candidate(
        run=run, agent_call=agent_call, entry=entry, content=_extract(body), replaces=replaces
    )
    # The candidate's in-run identity. ``replaces`` is kept as an attempt to
    # modify (cleaned and bounded for storage), whatever it names.
    candidate.attempt = PublicationAttempt(
        run=run,
        agent_call=agent_call,
        entry=entry,
        outcome=Outcome.REJECTED,
        replaces=clean_text(replaces)[:MAX_ID],
    )
    return candidate


# --- 2. source proof ------------------------------------------------------------


def prove_sources(
    candidate: Candidate, access: SourceAccess, cited: list[str], block_ids: list[str]
) -> None:
    """Per block: does every source it depends on pass the owner's current authorization?

    A real reference the owner may not use now → the block's effect is refused.
    An ID that resolves to nothing, or to a readable source this call did not
    retrieve → kept, unverified (degraded later). Idempotent per ID.
    """
    cited = [c for c in cited if c not in candidate.refs]
    lookup = [c for c in cited if shaped("cite", c)]
    refs: dict[str, ProofReference] = {}
    if lookup:
        # One statement: the references, their version's capability (the lease) and
        # whether each is in this call's evidence view (citations/evidence.py).
        refs = access.proof_references(lookup, candidate.agent_call)
        prefetch_references(access, refs.values())
    for cited_id in cited:
        ref = refs.get(cited_id)
        candidate.refs[cited_id] = ref
        if ref is None:
            continue
        if not access.reference_ok(ref):
            candidate.rejection = (Reason.SOURCE_NOT_AUTHORIZED, cited_id)
            return
        if ref.run_id == candidate.run.pk and ref.in_view:
            candidate.in_view.add(cited_id)

    # A reference to the block being revised is no dependency: the revision replaces it.
    pending = [
        b
        for b in block_ids
        if b != candidate.replaces
        and b not in candidate.blocks
        and b not in candidate.unresolved_blocks
    ]
    if not pending:
        return
    if candidate._graph is None:
        candidate._graph = SourceGraph.for_run(candidate.run, access)
    graph = candidate._graph
    for block_id in pending:
        block = graph.blocks.get(block_id)
        if block is None:
            # Another run's block, a garbled or an invented ID: nothing to inherit.
            candidate.unresolved_blocks.add(block_id)
        elif not graph.block_sources_ok(block_id):
            candidate.rejection = (Reason.DEPENDENCY_NOT_AUTHORIZED, block_id)
            return
        else:
            candidate.blocks[block_id] = block


# --- 3. degrade ------------------------------------------------------------------


def degrade_candidate(candidate: Candidate, access: SourceAccess) -> None:
    """Decide the numeric values: only a handle of this call's evidence view whose
    source the owner may still use renders its value; any other renders as
    "value unavailable" (never a guess). Unknown citations stay, unverified."""
    wanted = [h for h in candidate.markers().numeric_handles if shaped("num", h)]
    if not wanted:
        return
    handles = list(
        NumericHandle.objects.filter(
            run=candidate.run, agent_call_id__in=candidate.view(), pk__in=wanted
        ).select_related(
            "fact__document__version__knowledge",
            "version__knowledge",
            "citation__version__knowledge",
            "citation__document__version__knowledge",
        )
    )
    prefetch_references(access, (h.citation for h in handles if h.citation is not None))
    for handle in handles:
        ok = access.version_ok(handle.version)
        if handle.citation is not None:
            ok = ok and access.reference_ok(handle.citation)
        elif handle.fact.document_id is not None:
            ok = ok and access.document_ok(handle.fact.document)
        if ok:
            candidate.values[handle.pk] = (handle.fact.display(), handle.citation)


# --- 4. prepare ------------------------------------------------------------------


def _source_hint(flags: list[bool]) -> str:
    if not flags:
        return SourceHint.NONE
    if all(flags):
        return SourceHint.VERIFIED
    return SourceHint.PARTIAL if any(flags) else SourceHint.UNVERIFIED


def prepare_candidate(candidate: Candidate, access: SourceAccess) -> None:
    """Render values, bound the display, and bind exactly what is stored."""
    rendered = render_content(
        candidate.content, {h: value for h, (value, _) in candidate.values.items()}
    )
    candidate.content = rendered.content
    candidate.truncated = rendered.truncated

    markers = candidate.markers()
    # A rendered value could complete a marker the proof never saw; prove it now.
    unseen = [c for c in markers.cited_ids if c not in candidate.refs]
    unseen_blocks = [
        b
        for b in markers.block_ids
        if b not in candidate.blocks and b not in candidate.unresolved_blocks
    ]
    if unseen or unseen_blocks:
        prove_sources(candidate, access, unseen, unseen_blocks)
        if candidate.rejection:
            return

    bindings: dict[str, tuple[Reference | None, bool]] = {}
    flags = []
    for cited in markers.cited_ids:
        verified = cited in candidate.in_view
        bindings.setdefault(cited[:MAX_ID], (candidate.refs.get(cited), verified))
        flags.append(verified)
    for handle in dict.fromkeys(rendered.handles):
        value = candidate.values.get(handle)
        flags.append(value is not None)
        if value is not None and value[1] is not None:
            # The value inherits its source: revoking it protects the block.
            bindings.setdefault(f"num:{handle}"[:MAX_ID], (value[1], True))
    stored_blocks = set(markers.block_ids)
    flags += [False for b in candidate.unresolved_blocks if b in stored_blocks]
    candidate.bindings = [(cited, ref, ok) for cited, (ref, ok) in bindings.items()]
    candidate.dependencies = [
        candidate.blocks[b] for b in markers.block_ids if b in candidate.blocks
    ]
    candidate.source_hint = _source_hint(flags)
