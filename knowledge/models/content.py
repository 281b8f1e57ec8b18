"""What a version holds: its documents, their chunks and facts, frozen with the version
(``FrozenContentModel``, ``FrozenContentQuerySet``) once it leaves DRAFT."""

from collections.abc import Iterable
from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from knowledge.models.versions import ImmutableVersionError, KnowledgeVersion


class FrozenContentQuerySet[M: models.Model](models.QuerySet[M]):
    """Bulk updates and deletes bypass save(); refuse them on frozen versions."""

    version_path = "version"

    def _frozen(self) -> "FrozenContentQuerySet[M]":
        return self.exclude(**{f"{self.version_path}__status": KnowledgeVersion.Status.DRAFT})

    def update(self, **kwargs: Any) -> int:
        allowed = getattr(self.model, "MUTABLE_FIELDS", ())
        if set(kwargs) - set(allowed) and self._frozen().exists():
            raise ImmutableVersionError(
                f"{self.model.__name__} rows of a published version cannot change."
            )
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        if self._frozen().exists():
            raise ImmutableVersionError(
                f"{self.model.__name__} rows of a published version cannot be deleted."
            )
        return super().delete()


class ChunkQuerySet[M: models.Model](FrozenContentQuerySet[M]):
    version_path = "document__version"

    def bulk_create(self, objs: Iterable[M], *args: Any, **kwargs: Any) -> list[M]:
        """``bulk_create`` skips save(): each chunk takes its document's version here."""
        objs = list(objs)
        for obj in objs:
            if isinstance(obj, Chunk):
                obj.take_document_version()
        return super().bulk_create(objs, *args, **kwargs)


class FrozenContentModel(models.Model):
    """Content that belongs to a version: writable only while it is a DRAFT."""

    MUTABLE_FIELDS: tuple[str, ...] = ()

    class Meta:
        abstract = True

    def owning_version(self) -> KnowledgeVersion:
        raise NotImplementedError

    def _guard(self, update_fields: Iterable[str] | None = None) -> None:
        version = self.owning_version()
        if update_fields is not None and set(update_fields) <= set(self.MUTABLE_FIELDS):
            return
        if (
            KnowledgeVersion.objects.filter(pk=version.pk)
            .exclude(status=KnowledgeVersion.Status.DRAFT)
            .exists()
        ):
            raise ImmutableVersionError(
                f"{version} is not a DRAFT; its {type(self).__name__} rows cannot change."
            )

    def save(self, *args: Any, **kwargs: Any) -> None:
        self._guard(kwargs.get("update_fields"))
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        self._guard()
        return super().delete(*args, **kwargs)


class Document(FrozenContentModel):
    # The ACL is permission, not content: it may change on a published version.
    MUTABLE_FIELDS = ("restricted",)

    version = models.ForeignKey(
        KnowledgeVersion,
        on_delete=models.CASCADE,
        related_name="documents",
        verbose_name=pgettext_lazy("field", "版本"),
    )
    key = models.CharField(max_length=128, verbose_name=pgettext_lazy("field", "标识"))
    title = models.CharField(max_length=500, verbose_name=pgettext_lazy("field", "标题"))
    source_version = models.CharField(
        max_length=128, blank=True, verbose_name=pgettext_lazy("field", "原文版本")
    )
    text = models.TextField(
        help_text=_("全文：各页之间以空行连接。"), verbose_name=pgettext_lazy("field", "文本")
    )
    page_count = models.PositiveIntegerField(default=1, verbose_name=pgettext_lazy("field", "页数"))
    # False: every user of the tenant may read it. True: only users holding the
    # guardian object permission ``knowledge.read_document``.
    restricted = models.BooleanField(default=False, verbose_name=pgettext_lazy("field", "受限"))

    objects = FrozenContentQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "文档")
        verbose_name_plural = pgettext_lazy("models", "文档")
        permissions = [("read_document", "May read the document's excerpts")]
        constraints = [
            models.UniqueConstraint(fields=["version", "key"], name="document_unique_version_key"),
            # What a chunk's (document, version) refers to on PostgreSQL (migration 0011).
            models.UniqueConstraint(fields=["id", "version"], name="document_unique_id_version"),
        ]

    def __str__(self) -> str:
        return self.title

    def owning_version(self) -> KnowledgeVersion:
        return self.version


class Chunk(FrozenContentModel):
    document = models.ForeignKey(
        Document,
        on_delete=models.CASCADE,
        related_name="chunks",
        verbose_name=pgettext_lazy("field", "文档"),
    )
    ordinal = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "序号"))
    page = models.PositiveIntegerField(verbose_name=pgettext_lazy("field", "页码"))
    paragraph = models.PositiveIntegerField(
        default=1,
        help_text=_("片段开始处在其所在页中的段落序号（按非空行计，从 1 开始）"),
        verbose_name=pgettext_lazy("field", "段落"),
    )
    start = models.PositiveIntegerField(
        help_text=_("在文档全文中的 UTF-16 位置"), verbose_name=pgettext_lazy("field", "起始位置")
    )
    end = models.PositiveIntegerField(
        help_text=_("在文档全文中的 UTF-16 位置（不含该位置）"),
        verbose_name=pgettext_lazy("field", "结束位置"),
    )
    text = models.TextField(verbose_name=pgettext_lazy("field", "文本"))
    digest = models.CharField(max_length=64, verbose_name=pgettext_lazy("field", "摘要值"))
    search_text = models.TextField(
        help_text=_("以空格连接的检索词（中日韩文字二元组、ASCII 单词）"),
        verbose_name=pgettext_lazy("field", "检索文本"),
    )
    # The tokens ``search_text`` holds more than once, marked (``knowledge.text.
    # search_marks``), written with it by ingest. Read with each candidate, they bound
    # its score before it is counted (``ranking.Bm25.reaches``): a token without its
    # mark weighs at most its single impact (``VersionTerm.single``).
    search_marks = models.TextField(
        blank=True,
        default="",
        help_text=_("片段中出现两次及以上的检索词（带标记）"),
        verbose_name=pgettext_lazy("field", "重复检索词"),
    )
    # The document's version, copied at insert (``take_document_version``) so that on
    # PostgreSQL "these versions' chunks holding these tokens" is one scan of one GIN
    # index on (version, search_vector) (migration 0011), not a walk of the versions'
    # documents filtering each chunk's vector. A copy, never a choice: PostgreSQL refuses
    # a chunk whose (document, version) is not a document's (a foreign key on both, which
    # also carries a document's move to another version). Chunks go with their document
    # (its cascade), hence DO_NOTHING; the GIN index serves lookups by version.
    version = models.ForeignKey(
        KnowledgeVersion,
        on_delete=models.DO_NOTHING,
        db_index=False,
        editable=False,
        related_name="+",
        verbose_name=pgettext_lazy("field", "版本"),
    )

    objects = ChunkQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "文本片段")
        verbose_name_plural = pgettext_lazy("models", "文本片段")
        ordering = ["document_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="chunk_unique_ordinal")
        ]
        # The GIN index on (version, the stored to_tsvector('simple', search_text)) is
        # PostgreSQL-only (migrations 0004, 0011); SQLite takes the portable path.

    def __str__(self) -> str:
        return f"{self.document_id}/{self.ordinal}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.take_document_version()
        super().save(*args, **kwargs)

    def take_document_version(self) -> None:
        """Set ``version`` to the document's; a chunk given another one is refused."""
        version_id = self.document.version_id
        if self.version_id is not None and self.version_id != version_id:
            raise ValueError(
                f"chunk {self} names version {self.version_id}; its document is of {version_id}"
            )
        self.version_id = version_id

    def owning_version(self) -> KnowledgeVersion:
        return self.document.version

    @property
    def locator(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end}


class Fact(FrozenContentModel):
    """A numeric fact a document declares; retrieval hands out num_ handles for it."""

    document = models.ForeignKey(
        Document,
        on_delete=models.CASCADE,
        related_name="facts",
        verbose_name=pgettext_lazy("field", "文档"),
    )
    # The chunk whose text states the value: its citation is the only one a handle gets.
    # NULL only for facts stored before anchoring that no chunk states: never handed out.
    chunk = models.ForeignKey(
        Chunk,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="facts",
        verbose_name=pgettext_lazy("field", "文本片段"),
    )
    key = models.CharField(max_length=128, verbose_name=pgettext_lazy("field", "标识"))
    value = models.DecimalField(
        max_digits=30, decimal_places=10, verbose_name=pgettext_lazy("field", "数值")
    )
    unit = models.CharField(max_length=32, blank=True, verbose_name=pgettext_lazy("field", "单位"))
    as_of = models.DateField(null=True, blank=True, verbose_name=pgettext_lazy("field", "截至日期"))
    label = models.CharField(
        max_length=200,
        blank=True,
        help_text=_("给人阅读的名称；为空时显示标识"),
        verbose_name=pgettext_lazy("field", "显示名称"),
    )

    objects = ChunkQuerySet.as_manager()

    class Meta:
        verbose_name = pgettext_lazy("model", "事实")
        verbose_name_plural = pgettext_lazy("models", "事实")
        constraints = [models.UniqueConstraint(fields=["document", "key"], name="fact_unique_key")]

    def __str__(self) -> str:
        return self.key

    def owning_version(self) -> KnowledgeVersion:
        return self.document.version

    def display(self) -> str:
        value = format(self.value.normalize(), "f")
        return f"{value}{self.unit}"
