"""The answer text next to a citation's markers, for the preview's highlights
(citations/highlights.py asks for it through the source this module registers)."""

from django.db.models import F

from citations.markers import ANY_MARKER
from citations.models import CitationReference
from publication.models import SourceBinding
from publication.text import body_texts


def cited_passages(reference: CitationReference) -> list[str]:
    """The text written right before each marker of ``reference`` in the current answer
    (the current revision of every block that binds it)."""
    rows = SourceBinding.objects.filter(
        citation_id=reference.pk,
        revision__block__run_id=reference.run_id,
        revision__revision=F("revision__block__current_revision"),
    ).values_list("revision__content", flat=True)
    markers = {f"[[cite:{reference.pk}]]", f"[{reference.pk}]"}
    passages = []
    for content in dict.fromkeys("\n".join(body_texts(c)) for c in rows):
        position = 0
        for marker in ANY_MARKER.finditer(content):
            if marker.group(0) in markers:
                passages.append(content[position : marker.start()])
            position = marker.end()
    return passages
