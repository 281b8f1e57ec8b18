"""What an apply would change, read against the database without writing: the
differences between a stored version and its spec (a DRAFT follows the file; a
published one must match it), and the summary of an apply."""

from collections.abc import Callable

from agents.models import AgentVersion
from knowledge.models import (
    Document,
    KnowledgeVersion,
)
from knowledge.text import PAGE_SEPARATOR, utf16_len
from provisioning.errors import ManifestError
from provisioning.shapes import key_path
from provisioning.specs import (
    PUBLISHED_CONTENT_MESSAGE,
    AgentVersionSpec,
    ApplyResult,
    DocumentSpec,
    KnowledgeVersionSpec,
)


def remote_differences(version: KnowledgeVersion, spec: KnowledgeVersionSpec) -> list[str]:
    differences = []
    if version.endpoint != spec.endpoint:
        differences.append("endpoint")
    if version.secret != spec.secret:
        differences.append(spec.secret_key)
    if version.timeout_seconds != spec.timeout_seconds:
        differences.append("timeoutSeconds")
    return differences


def check_frozen_version(version: KnowledgeVersion, spec: KnowledgeVersionSpec) -> None:
    remote = remote_differences(version, spec)
    if remote:
        raise ManifestError(
            key_path(spec.path, remote[0]),
            f"{PUBLISHED_CONTENT_MESSAGE} ({version.label} is {version.status})",
        )
    stored = {d.key: d for d in version.documents.all()}
    chunks = chunk_bounds(version)
    wanted = {d.key for d in spec.documents}
    missing = sorted(set(stored) - wanted)
    if missing:
        raise ManifestError(
            key_path(spec.path, "documents"),
            f"{PUBLISHED_CONTENT_MESSAGE} (document {missing[0]!r} of {version.label} "
            "is missing from the file)",
        )
    for document_spec in spec.documents:
        document = stored.get(document_spec.key)
        if document is None:
            raise ManifestError(
                key_path(document_spec.path, "key"),
                f"{PUBLISHED_CONTENT_MESSAGE} (document {document_spec.key!r} is not in "
                f"{version.label})",
            )
        differences = document_differences(document, document_spec, chunks[document.pk])
        if differences:
            path, detail = differences[0]
            raise ManifestError(
                path,
                f"{PUBLISHED_CONTENT_MESSAGE} ({version.label} is {version.status}: {detail})",
            )


def check_frozen_agent_version(version: AgentVersion, spec: AgentVersionSpec) -> None:
    stored_knowledge = {
        f"{k.knowledge.key}@{k.version}"
        for k in version.allowed_knowledge.select_related("knowledge")
    }
    stored_sub_agents = {a.key for a in version.sub_agents.all()}
    comparisons = (
        ("instructions", version.instructions, spec.instructions),
        ("model", version.model, spec.model),
        ("allowedKnowledge", stored_knowledge, set(spec.allowed_knowledge)),
        ("subAgents", stored_sub_agents, set(spec.sub_agents)),
        ("maxSteps", version.max_steps, spec.max_steps),
        ("routing", version.routing, spec.routing),
    )
    for key, stored, wanted in comparisons:
        if stored != wanted:
            raise ManifestError(
                key_path(spec.path, key),
                f"{PUBLISHED_CONTENT_MESSAGE} (agent version {version} is {version.status})",
            )


def chunk_bounds(version: KnowledgeVersion) -> dict[int, list[tuple[int, int, int]]]:
    bounds: dict[int, list[tuple[int, int, int]]] = {}
    for document_id, page, start, end in version.documents.values_list(
        "chunks__document_id", "chunks__page", "chunks__start", "chunks__end"
    ):
        if document_id is not None:
            bounds.setdefault(document_id, []).append((page, start, end))
    for document in version.documents.values_list("pk", flat=True):
        bounds.setdefault(document, [])
    return bounds


def _page_differences(
    document: Document, pages: tuple[str, ...], chunks: list[tuple[int, int, int]]
) -> tuple[int | None, str] | None:
    """(index of the first differing page or None, why) if the stored text does not
    match ``pages``; None if it does.

    The pages are not stored one by one; the full text and the page of each
    chunk are. Same text + same page count + every chunk inside its page's
    UTF-16 range means the same pages.
    """
    offset = 0
    for index, page in enumerate(pages):
        if document.text[offset : offset + len(page)] != page:
            return index, f"page {index + 1} differs"
        offset += len(page) + len(PAGE_SEPARATOR)
    if document.text != PAGE_SEPARATOR.join(pages) or document.page_count != len(pages):
        return None, f"the stored document has {document.page_count} pages, the file {len(pages)}"
    ranges = []
    start16 = 0
    for page in pages:
        length = utf16_len(page)
        ranges.append((start16, start16 + length))
        start16 += length + utf16_len(PAGE_SEPARATOR)
    for page_number, start, end in chunks:
        low, high = ranges[page_number - 1] if 0 < page_number <= len(ranges) else (0, -1)
        if not low <= start <= end <= high:
            return None, "page boundaries differ"
    return None


def document_differences(
    document: Document, spec: DocumentSpec, chunks: list[tuple[int, int, int]]
) -> list[tuple[str, str]]:
    """(path, what) for each content field of the document that differs from the file."""
    differences = []
    if document.title != spec.title:
        differences.append((key_path(spec.path, "title"), "the title differs"))
    if document.source_version != spec.source_version:
        differences.append((key_path(spec.path, "sourceVersion"), "sourceVersion differs"))
    pages = _page_differences(document, spec.pages, chunks)
    if pages:
        index, why = pages
        path = key_path(spec.path, "pages")
        differences.append((path if index is None else key_path(path, index), why))
    stored = {f.key: f for f in document.facts.select_related("chunk")}
    # A page the file gives must be the page of the stored fact's chunk; without one, the
    # stored anchor (found in the same text by the same rule) stands.
    stored_facts = {
        key: (f.value, f.unit, f.as_of, f.label, f.chunk.page if f.chunk is not None else None)
        for key, f in stored.items()
    }
    wanted_facts = {
        f.key: (
            f.value,
            f.unit,
            f.as_of,
            f.label,
            f.page
            if f.page is not None
            else (stored_facts[f.key][4] if f.key in stored_facts else None),
        )
        for f in spec.facts
    }
    if stored_facts != wanted_facts:
        path = key_path(spec.path, "facts")
        for index, fact in enumerate(spec.facts):
            if stored_facts.get(fact.key) != wanted_facts[fact.key]:
                path = key_path(path, index)
                break
        differences.append((path, "the facts differ"))
    return differences


def describe(result: ApplyResult, source: str, write: Callable[[str], None]) -> None:
    """Human summary of an apply, for the command."""
    count = len(result.changes)
    if result.dry_run:
        head = f"Dry run of {source}: " + (
            f"{count} change{'s' if count != 1 else ''} would be made; nothing was written."
            if count
            else "no changes; the database already matches the file."
        )
    else:
        head = f"Applied {source}: " + (
            f"{count} change{'s' if count != 1 else ''}."
            if count
            else "no changes; the database already matches the file."
        )
    write(head)
    for line in result.changes:
        write(f"  {line}")
    for line in result.warnings:
        write(f"warning: {line}")
    if result.tokens:
        write("Generated tokens (shown once; they are stored only as hashes):")
        for label, raw in result.tokens:
            write(f"  {label}: {raw}")
