"""The answer text next to a citation's markers, for the preview's highlights
(citations/highlights.py asks for it through the source this module registers)."""

from collections.abc import Iterable
from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.db import connection
from django.db.models import F, OuterRef, QuerySet

from citations.markers import ANY_MARKER
from citations.models import CitationReference
from publication.models import SourceBinding
from publication.text import body_texts

# Where ``passage_annotations`` leaves the current contents on the reference.
_CONTENTS = "cited_contents"


def _current_contents(citation: Any, run: Any) -> QuerySet[SourceBinding, Any]:
    """The bodies of the current revisions that bind ``citation`` in ``run``."""
    return SourceBinding.objects.filter(
        citation_id=citation,
        revision__block__run_id=run,
        revision__revision=F("revision__block__current_revision"),
    ).values_list("revision__content", flat=True)


def passage_annotations() -> dict[str, Any]:
    """The same read, inside the reference's query (PostgreSQL: an array subquery)."""
    if connection.vendor != "postgresql":
        return {}
    return {_CONTENTS: ArraySubquery(_current_contents(OuterRef("pk"), OuterRef("run_id")))}


def cited_passages(reference: CitationReference) -> list[str]:
    """The text written right before each marker of ``reference`` in the current answer
    (the current revision of every block that binds it)."""
    rows = reference.__dict__.pop(_CONTENTS, None)  # read with the reference, this request
    if rows is None:
        rows = _current_contents(reference.pk, reference.run_id)
    return passages_in(rows, reference.pk)


def passages_in(contents: Iterable[object], citation_id: str) -> list[str]:
    """The text each block body of ``contents`` writes right before each marker of
    ``citation_id`` (a body that does not cite it gives none)."""
    markers = {f"[[cite:{citation_id}]]", f"[{citation_id}]"}
    passages = []
    for content in dict.fromkeys("\n".join(body_texts(c)) for c in contents):
        position = 0
        for marker in ANY_MARKER.finditer(content):
            if marker.group(0) in markers:
                passages.append(content[position : marker.start()])
            position = marker.end()
    return passages
