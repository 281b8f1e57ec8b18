"""A published version's search statistics (``VersionIndex``, ``VersionTerm``), built
once in the publishing transaction (``build_version_index``) and never changed."""

from collections import Counter
from dataclasses import dataclass

from django.db import models
from django.utils import timezone
from django.utils.translation import pgettext_lazy

from knowledge.models.content import Chunk
from knowledge.models.versions import Knowledge, KnowledgeVersion
from knowledge.text import MAX_TOKEN_CHARS
from knowledge.vocabulary import entity_aliases


@dataclass(frozen=True)
class VersionCounts:
    chunk_count: int
    token_count: int
    frequencies: Counter[str]
    titles: list[str]


def count_version(version: KnowledgeVersion) -> VersionCounts:
    """A version's search statistics, read from its chunks (nothing written)."""
    frequencies: Counter[str] = Counter()
    chunk_count = token_count = 0
    rows = Chunk.objects.filter(document__version=version).values_list("search_text", flat=True)
    for search_text in rows.iterator(chunk_size=2000):
        tokens = search_text.split()
        chunk_count += 1
        token_count += len(tokens)
        frequencies.update(t for t in set(tokens) if len(t) <= MAX_TOKEN_CHARS)
    titles = list(version.documents.values_list("title", flat=True))
    return VersionCounts(chunk_count, token_count, frequencies, titles)


class VersionIndex(models.Model):
    """A published version's search statistics, computed once when it is published
    (``build_version_index``, below) and never changed: its chunks, their total length
    in search tokens, and the entity aliases of its titles."""

    version = models.OneToOneField(
        KnowledgeVersion,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="index",
        verbose_name=pgettext_lazy("field", "版本"),
    )
    chunk_count = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "片段数"))
    token_count = models.PositiveBigIntegerField(verbose_name=pgettext_lazy("field", "词元数"))
    entities = models.JSONField(
        default=dict, blank=True, verbose_name=pgettext_lazy("field", "实体")
    )
    built_at = models.DateTimeField(
        default=timezone.now, verbose_name=pgettext_lazy("field", "构建时间")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "版本检索统计")
        verbose_name_plural = pgettext_lazy("models", "版本检索统计")

    def __str__(self) -> str:
        return str(self.version_id)


class VersionTerm(models.Model):
    """How many chunks of a version hold a search token (its document frequency), and
    the most it weighs in one of them (``knowledge.ranking.term_impacts``)."""

    version = models.ForeignKey(
        KnowledgeVersion,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=pgettext_lazy("field", "版本"),
    )
    token = models.CharField(max_length=64, verbose_name=pgettext_lazy("field", "检索词"))
    chunks = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "含该词的片段数"))
    # max over the version's chunks of tf / (tf + k1·(1 − b + b·len/avglen)), avglen the
    # version's own; null (stored before it existed): unknown, the bound is then 1.
    impact = models.FloatField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "单片段最大权重")
    )
    # The same maximum over the chunks holding the token exactly once (0: none does);
    # null (stored before it existed, migration 0014): unknown, ``impact`` bounds them.
    single = models.FloatField(
        null=True, blank=True, verbose_name=pgettext_lazy("field", "单次出现最大权重")
    )

    class Meta:
        verbose_name = pgettext_lazy("model", "版本检索词频")
        verbose_name_plural = pgettext_lazy("models", "版本检索词频")
        constraints = [
            models.UniqueConstraint(fields=["version", "token"], name="versionterm_unique_token")
        ]

    def __str__(self) -> str:
        return f"{self.version_id}/{self.token}"


def build_version_index(version: KnowledgeVersion) -> bool:
    """Compute and store ``version``'s statistics; False if they were already stored
    (they never change: a published version's chunks cannot). REMOTE versions have none."""
    if version.knowledge.type == Knowledge.Type.REMOTE:
        return False
    if VersionIndex.objects.filter(version=version).exists():
        return False
    from knowledge.ranking import term_impacts

    counts = count_version(version)
    impacts = term_impacts(version, counts)
    VersionTerm.objects.bulk_create(
        (
            VersionTerm(version=version, token=t, chunks=n, impact=i.most, single=i.single)
            if (i := impacts.get(t))
            else VersionTerm(version=version, token=t, chunks=n)
            for t, n in counts.frequencies.items()
        ),
        batch_size=5000,
    )
    VersionIndex.objects.create(
        version=version,
        chunk_count=counts.chunk_count,
        token_count=counts.token_count,
        entities=entity_aliases(counts.titles).entries(),
    )
    return True
