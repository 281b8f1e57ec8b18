"""运行详情: the run detail, its 回答来源区 and the runtime journal, as a platform admin sees them.

Every answer body comes through Publication's reader, which decides for the run's
owner *now* (a revoked source hides the block, in every revision); the console
never shows a source excerpt — that is the preview endpoint's job, with the owner's
credentials (the event log reads an excerpt's text only to count which paragraph a
citation is at). Journal entries are redacted to their summaries here.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, Max

from api.selectors import run_searches
from citations.access import source_refusals
from citations.highlights import paragraph_of
from citations.markers import ANY_MARKER, CITE_MARKER, LEGACY_CITE_MARKER
from citations.trusted import root_check, trusted_sources
from console import labels
from knowledge.models import Chunk
from publication.models import BlockRevision, PublicationAttempt
from publication.passages import passages_in
from publication.reader import PROTECTED, VISIBLE, RunReader
from runs.models import AgentCall, DeliveryAck, DeliveryLog, JournalEntry, Run, RunEvent

EVENT_DISPLAY_LIMIT = 2000


# --- answer segments (server-side twin of the SDK's answerSegments) -----------------
# Pinned with answerSegments and citationState (static/sparktide/segments.js) by the
# hand-written cases of tests/conformance/answer_segments.json.


@dataclass(frozen=True)
class Segment:
    """One piece of an answer as the page without scripts shows it. A marker is never shown as
    written: a citation is a text chip with its state (``[1]`` 来源已核验 / 待核验 / 来源未核验),
    a numeric or block marker a labelled chip; the body's Markdown stays escaped text."""

    type: str  # "text" | "citation" (a VERIFIED source entry) | "marker" (no source entry)
    text: str = ""
    citation: dict[str, Any] | None = None
    number: int = 0
    # citation: "verified"; marker: "pending" | "unverified" (a cite marker), "num" | "block"
    state: str = ""
    citation_id: str = ""


def answer_segments(
    text: str, verified: dict[str, tuple[int, dict[str, Any]]], *, settled: bool = True
) -> list[Segment]:
    """Only IDs the root call's check VERIFIED (and the run announced with an exact version
    and chunk) become entries. Every other cite marker is *pending* while the run can still
    verify it (no final check, run not terminal: the SDK's ``citationState``) and *unverified*
    once it cannot; its text is kept only for the segment, never shown."""
    segments: list[Segment] = []
    position = 0
    for match in ANY_MARKER.finditer(text):
        if match.start() > position:
            segments.append(Segment("text", text[position : match.start()]))
        marker = match.group(0)
        cite = CITE_MARKER.fullmatch(marker) or LEGACY_CITE_MARKER.fullmatch(marker)
        entry = verified.get(cite.group(1)) if cite else None
        if entry is not None:
            number, citation = entry
            segments.append(
                Segment(
                    "citation",
                    marker,
                    citation=citation,
                    number=number,
                    state="verified",
                    citation_id=cite.group(1) if cite else "",
                )
            )
        elif cite:
            state = "unverified" if settled else "pending"
            segments.append(Segment("marker", marker, state=state, citation_id=cite.group(1)))
        else:
            segments.append(Segment("marker", marker, state=marker[2 : marker.index(":")]))
        position = match.end()
    if position < len(text):
        segments.append(Segment("text", text[position:]))
    return segments


# --- event log ----------------------------------------------------------------------


# The block badge of the page without scripts: the SDK's blockSourceStatus
# (static/sparktide/segments.js), pinned with it by tests/conformance/block_badges.json.
_HINT_RANK = {"verified": 3, "sources_partial": 2, "sources_unverified": 1}


def block_badge(
    state: str, source_hint: str | None, cited: list[bool], *, checked: bool, settled: bool
) -> str:
    """The source badge a block may show now: its receipt's hint, never more than the root
    call's final check says of the IDs it cites (``cited``: one entry per distinct cited ID,
    VERIFIED or not). Before that check a claim of verified sources is *pending* — or
    ``sources_unverified`` once the run can no longer check it."""
    if state == PROTECTED:
        return "protected"
    hint = source_hint or "unknown"
    if hint not in _HINT_RANK:
        return "none" if hint == "none" else "unknown"
    if hint == "sources_unverified":
        return hint
    if not checked:
        return "sources_unverified" if settled else "pending"
    if not cited:
        return hint  # its sources are numeric or block references: the receipt says
    verified = sum(cited)
    from_check = (
        "verified"
        if verified == len(cited)
        else "sources_partial"
        if verified
        else "sources_unverified"
    )
    return from_check if _HINT_RANK[from_check] < _HINT_RANK[hint] else hint


def _cited(segments: list[Segment] | None) -> list[bool]:
    """One entry per distinct cited ID of a body's segments: VERIFIED or not."""
    seen: dict[str, bool] = {}
    for seg in segments or []:
        if seg.type == "citation" or seg.state in ("pending", "unverified"):
            seen.setdefault(seg.citation_id, seg.type == "citation")
    return list(seen.values())


def annotate_events(
    events: list[dict[str, Any]],
    all_events: list[dict[str, Any]],
    root: str | None,
    answer: Sequence[object] = (),
) -> None:
    """What the event log's summaries need beyond an event's own data, under ``console``:
    ``checked`` — the root call's final check came before this event (a receipt's claim of
    verified sources is only pending until then); ``paragraph`` — for citation.created, the
    paragraph of its page the citation is at, by the rule the source dialog's location
    follows (``citations.highlights.paragraph_of``): where the passage the current answer
    (``answer``: the bodies the owner may see now) cites begins, else where its excerpt
    begins. The excerpt's text is read only to count its lines, never shown. One query
    whatever the number of events."""
    check_seq = next(
        (
            e["seq"]
            for e in all_events
            if e["type"] == "citation.verified" and root and e["data"].get("agentCallId") == root
        ),
        None,
    )
    chunk_ids = {
        int(e["data"]["chunkId"])
        for e in events
        if e["type"] == "citation.created" and str(e["data"].get("chunkId", "")).isdigit()
    }
    chunks = (
        {
            pk: (paragraph, text)
            for pk, paragraph, text in Chunk.objects.filter(pk__in=chunk_ids).values_list(
                "pk", "paragraph", "text"
            )
        }
        if chunk_ids
        else {}
    )
    for event in events:
        chunk = str(event["data"].get("chunkId", ""))
        found = chunks.get(int(chunk)) if chunk.isdigit() else None
        paragraph = None
        if found is not None and event["type"] == "citation.created":
            paragraph = paragraph_of(
                found[0],
                found[1],
                passages_in(answer, str(event["data"].get("id", ""))),
                title=str(event["data"].get("title") or ""),
            )
        event["console"] = {
            "checked": check_seq is not None and event["seq"] > check_seq,
            "paragraph": paragraph,
        }


# --- run detail -------------------------------------------------------------------


@dataclass
class SourceEntry:
    id: str
    number: int = 0
    citation: dict[str, Any] | None = None
    note: str = ""
    # Why 查看来源片段 would be refused now (citations.access.source_refusals), in words.
    refusal: str = ""
    reason: str = ""


@dataclass
class Sources:
    root_agent_call_id: str | None
    checked: bool
    verified: list[SourceEntry] = field(default_factory=list)
    unverified: list[SourceEntry] = field(default_factory=list)
    retrieved: int = 0

    def verified_map(self) -> dict[str, tuple[int, dict[str, Any]]]:
        return {s.id: (s.number, s.citation) for s in self.verified if s.citation}

    def citations(self) -> list[dict[str, Any]]:
        """The public citation.created data of the VERIFIED sources (for the page script)."""
        return [s.citation for s in self.verified if s.citation]


def answer_sources(events: list[dict[str, Any]]) -> Sources:
    """回答来源区 from the run's own events, by the one trusted-source rule
    (citations/trusted.py): the root call's own citation.verified, announced exactly."""
    root = next(
        (
            e["data"].get("agentCallId")
            for e in events
            if e["type"] == "agent.started" and e["data"].get("depth") == 0
        ),
        None,
    )
    created = {e["data"]["id"]: e["data"] for e in events if e["type"] == "citation.created"}
    checks = {
        e["data"].get("agentCallId"): e["data"] for e in events if e["type"] == "citation.verified"
    }
    trusted = trusted_sources(root, checks, created)
    sources = Sources(root_agent_call_id=root, checked=trusted.checked, retrieved=len(created))
    for number, (ref_id, citation) in enumerate(trusted.verified, start=1):
        sources.verified.append(SourceEntry(ref_id, number=number, citation=citation))
    claimed = {
        r.get("id")
        for r in (root_check(root, checks) or {}).get("references", [])
        if isinstance(r, dict) and r.get("status") == "VERIFIED"
    }
    for ref_id in trusted.unverified:
        # Listed VERIFIED but never announced with an exact version and chunk.
        note = "no-exact-version" if ref_id in claimed else ""
        sources.unverified.append(SourceEntry(ref_id, citation=None, note=note))
    return sources


def mark_refused(sources: Sources, refusals: dict[str, str]) -> None:
    """A verified source whose preview would be refused now keeps its entry and number, with
    the reason in words; its citation data (the chips' and the page script's) says so under
    ``unavailable``. A copy: the event log shows the event's own data."""
    for entry in sources.verified:
        refusal = refusals.get(entry.id)
        if not refusal:
            continue
        entry.refusal = refusal
        entry.reason = str(labels.SOURCE_REFUSAL.get(refusal, labels.SOURCE_REFUSAL["other"]))
        if entry.citation is not None:
            entry.citation = {
                **entry.citation,
                "unavailable": {"code": refusal, "reason": entry.reason},
            }


@dataclass
class RevisionRow:
    revision: int
    committed_at: datetime
    source_hint: str
    truncated: bool
    body_digest: str
    current: bool
    state: str  # visible | protected
    content: dict[str, Any] | None
    segments: list[Segment] | None = None
    badge: str = "unknown"  # block_badge: what the page without scripts shows


@dataclass
class BlockDetail:
    id: str
    delivery_ordinal: int
    origin: str
    state: str
    revision: int
    source_hint: str
    truncated: bool
    content: dict[str, Any] | None
    segments: list[Segment] | None
    revisions: list[RevisionRow]
    attempts: list[PublicationAttempt]
    badge: str = "unknown"  # block_badge: what the page without scripts shows


@dataclass
class ConnectionEvidence:
    connection_id: str
    client_id: str
    user: str
    opened_at: datetime | None
    closed_at: datetime | None
    sent: int | None
    received: int | None = None
    rendered: int | None = None
    ack_count: int = 0
    # Closed by the sweep: the server holding the socket died (runs.models.DeliveryLog).
    abandoned: bool = False


@dataclass
class RunDetail:
    run: Run
    events: list[dict[str, Any]]
    events_truncated: bool
    blocks: list[BlockDetail]
    loose_attempts: list[PublicationAttempt]
    sources: Sources
    agent_calls: list[AgentCall]
    journal: list[JournalEntry]
    deliveries: list[ConnectionEvidence]
    quota_used: int
    searches: list[dict[str, Any]] = field(default_factory=list)


def console_run(run_id: str) -> Run | None:
    return (
        Run.objects.select_related("app__tenant", "owner", "agent_version__agent")
        .filter(pk=run_id)
        .first()
    )


def _segments_of(
    content: dict[str, Any] | None,
    verified: dict[str, tuple[int, dict[str, Any]]],
    *,
    settled: bool,
) -> list[Segment] | None:
    if isinstance(content, dict) and content.get("type") == "text":
        return answer_segments(str(content.get("text", "")), verified, settled=settled)
    return None


def run_detail(run: Run) -> RunDetail:
    """Everything 运行详情 shows, in a fixed number of queries (independent of the number
    of blocks, revisions, events and connections)."""
    reader = RunReader(run)
    shown = list(RunEvent.objects.filter(run=run).order_by("seq")[: EVENT_DISPLAY_LIMIT + 1])
    truncated = len(shown) > EVENT_DISPLAY_LIMIT
    shown = shown[:EVENT_DISPLAY_LIMIT]
    if truncated:
        # The 回答来源区 is decided from the run's citation events: read all of them.
        extra = RunEvent.objects.filter(
            run=run, type__in=["citation.verified", "citation.created"]
        ).exclude(seq__lte=shown[-1].seq)
        shown_all = shown + list(extra.order_by("seq"))
    else:
        shown_all = shown
    hydrated_all = reader.hydrate(shown_all)
    events = hydrated_all[: len(shown)]
    sources = answer_sources(hydrated_all)
    mark_refused(sources, source_refusals(run, [s.id for s in sources.verified], reader.access))
    annotate_events(
        events,
        hydrated_all,
        sources.root_agent_call_id,
        [view.content for view in reader.blocks() if view.state == VISIBLE],
    )
    verified = sources.verified_map()
    # A marker not VERIFIED can still become so only while the run may still check it.
    settled = sources.checked or run.is_terminal

    # Every revision's visibility and body as the reader decides them (a block withheld
    # now is withheld in every revision); the console never rebuilds a body itself.
    revision_views = reader.revisions()
    revisions: dict[str, list[BlockRevision]] = defaultdict(list)
    for revision in (
        BlockRevision.objects.filter(block__run=run)
        .defer("content")
        .order_by("block_id", "revision")
    ):
        revisions[revision.block_id].append(revision)
    attempts: dict[str | None, list[PublicationAttempt]] = defaultdict(list)
    for attempt in PublicationAttempt.objects.filter(run=run).defer("content").order_by("id"):
        attempts[attempt.block_id].append(attempt)

    blocks = []
    for view in reader.blocks():
        decided = {v.revision: v for v in revision_views.get(view.id, [])}
        rows = []
        for revision in revisions[view.id]:
            seen = decided.get(revision.revision)
            state = seen.state if seen is not None else PROTECTED
            content = seen.content if seen is not None and state == VISIBLE else None
            segments = _segments_of(content, verified, settled=settled)
            rows.append(
                RevisionRow(
                    revision=revision.revision,
                    committed_at=revision.committed_at,
                    source_hint=revision.source_hint or "unknown",
                    truncated=revision.truncated,
                    body_digest=revision.body_digest,
                    current=revision.revision == view.revision,
                    state=state,
                    content=content,
                    segments=segments,
                    badge=block_badge(
                        state,
                        revision.source_hint,
                        _cited(segments),
                        checked=sources.checked,
                        settled=settled,
                    ),
                )
            )
        rows.reverse()  # newest first
        segments = _segments_of(view.content, verified, settled=settled)
        blocks.append(
            BlockDetail(
                id=view.id,
                delivery_ordinal=view.delivery_ordinal,
                origin=view.origin,
                state=view.state,
                revision=view.revision,
                source_hint=view.source_hint,
                truncated=view.truncated,
                content=view.content,
                segments=segments,
                revisions=rows,
                attempts=attempts.get(view.id, []),
                badge=block_badge(
                    view.state,
                    view.source_hint,
                    _cited(segments),
                    checked=sources.checked,
                    settled=settled,
                ),
            )
        )

    return RunDetail(
        run=run,
        events=events,
        events_truncated=truncated,
        blocks=blocks,
        loose_attempts=attempts.get(None, []),
        sources=sources,
        agent_calls=list(
            AgentCall.objects.filter(run=run).select_related("agent_version__agent").order_by("id")
        ),
        journal=[_journal_row(e) for e in JournalEntry.objects.filter(run=run).order_by("id")],
        deliveries=delivery_evidence(run),
        quota_used=sum(a.quota_consumed for group in attempts.values() for a in group),
        searches=search_panels(run, hydrated_all),
    )


# --- 检索记录 -------------------------------------------------------------------------


def search_panels(run: Run, events: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """检索记录: each ``search_knowledge`` call of the run as its owner reads it through the
    REST detail (``api.selectors.run_searches``: terms, expansions, versions, hits with rank,
    score, document, page, citation ID and ``cited``, refused counts), each hit named by the
    title its ``citation.created`` event announced. Titles, pages and scores only: an
    excerpt's text is never read here (it stays behind 查看来源片段, with the owner's
    credentials). ``events``: the run's hydrated events when the caller has them; otherwise
    its citation.created events are read (one query)."""
    if events is None:
        events = [
            {"type": e.type, "data": e.data}
            for e in RunEvent.objects.filter(run=run, type="citation.created").only("type", "data")
        ]
    titles = {
        e["data"].get("id"): e["data"].get("title") or ""
        for e in events
        if e["type"] == "citation.created"
    }
    searches = run_searches(run)
    for number, search in enumerate(searches, start=1):
        search["number"] = number
        search["expansion_rows"] = [
            {"term": term, "alternatives": list(alternatives)}
            for term, alternatives in (search.get("expansions") or {}).items()
        ]
        refused = search.get("refused") or {}
        search["refused_versions"] = int(refused.get("versions") or 0)
        search["refused_acl"] = int(refused.get("acl") or 0)
        for hit in search["hits"]:
            hit["title"] = titles.get(hit.get("citationId")) or ""
            hit["citation_id"] = hit.get("citationId") or ""
    return searches


def delivery_evidence(run: Run) -> list[ConnectionEvidence]:
    """Per connection: how far the server sent (DeliveryLog) next to what the client itself
    acknowledged (DeliveryAck). The two are separate facts and shown side by side."""
    rows: dict[str, ConnectionEvidence] = {}
    for log in DeliveryLog.objects.filter(run=run).select_related("user").order_by("opened_at"):
        rows[log.connection_id] = ConnectionEvidence(
            connection_id=log.connection_id,
            client_id=log.client_id,
            user=log.user.get_username() if log.user else "",
            opened_at=log.opened_at,
            closed_at=log.closed_at,
            sent=log.last_sent_seq,
            abandoned=log.abandoned,
        )
    for ack in (
        DeliveryAck.objects.filter(run=run)
        .values("connection_id", "client_id", "kind")
        .annotate(last=Max("seq"), count=Count("id"))
        .order_by("connection_id")
    ):
        row = rows.get(ack["connection_id"])
        if row is None:
            row = rows[ack["connection_id"]] = ConnectionEvidence(
                connection_id=ack["connection_id"],
                client_id=ack["client_id"],
                user="",
                opened_at=None,
                closed_at=None,
                sent=None,
            )
        if ack["kind"] == DeliveryAck.Kind.RECEIVED:
            row.received = max(row.received or 0, ack["last"])
        else:
            row.rendered = max(row.rendered or 0, ack["last"])
        row.ack_count += ack["count"]
    return list(rows.values())


def _journal_row(entry: JournalEntry) -> JournalEntry:
    """Attach what the journal table may show. The runtime records the model's text and
    send_answer_part arguments, i.e. candidate answer bodies; those leave the store only
    through the reader, so the journal shows their size, never their text."""
    data = dict(entry.data or {})
    if entry.kind == JournalEntry.Kind.STEP and isinstance(data.get("text"), str):
        data["text"] = {"redactedChars": len(data["text"])}
    if entry.kind == JournalEntry.Kind.TOOL_CALL and entry.tool == "send_answer_part":
        arguments = dict(data.get("arguments") or {})
        if "markdown" in arguments:
            body = arguments["markdown"]
            arguments["markdown"] = {"redactedChars": len(body) if isinstance(body, str) else None}
        data["arguments"] = arguments
    entry.shown = data
    if entry.kind == JournalEntry.Kind.STEP:
        tools = data.get("toolCalls") or []
        entry.summary = ", ".join(tools) if tools else ("text" if data.get("text") else "—")
    elif entry.kind == JournalEntry.Kind.TOOL_RECEIPT:
        receipt = data.get("receipt") or {}
        outcome = receipt.get("outcome")
        entry.summary = str(
            labels.OUTCOME.get(outcome, outcome)
            if outcome
            else receipt.get("error") or (receipt and "ok") or "—"
        )
    elif entry.kind == JournalEntry.Kind.NOTE:
        outcome = (data.get("receipt") or {}).get("outcome", "—")
        entry.summary = str(labels.OUTCOME.get(outcome, outcome))
    else:
        entry.summary = str(data.get("toolCallId", "—"))
    return entry
