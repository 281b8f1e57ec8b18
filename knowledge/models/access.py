"""Who may read a document: the document ACL as a query (``readable_documents``) and
for one document (``user_may_read_document``), the same rule."""

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import BigIntegerField, Q, QuerySet
from django.db.models.functions import Cast
from guardian.utils import get_group_obj_perms_model, get_user_obj_perms_model

from knowledge.models.content import Document
from knowledge.models.versions import KnowledgeVersion


def readable_documents(
    owner: User | AnonymousUser | None, versions: Iterable[KnowledgeVersion]
) -> QuerySet[Document]:
    """Documents of the given versions the owner may read, as one lazy query: the
    document ACL as a query (retrieval), beside ``user_may_read_document``, the same
    rule for one document (source proof, preview). An inactive user reads nothing;
    the document must belong to the owner's tenant; unrestricted documents are
    readable by every user of it, restricted ones need ``knowledge.read_document`` on
    the document, held by the user or one of their groups — or a superuser, as
    Django's has_perm grants.
    """
    if owner is None or owner.pk is None or not owner.is_active:
        return Document.objects.none()
    documents = Document.objects.filter(
        version__in=[version.pk for version in versions],
        version__knowledge__tenant__users__user_id=owner.pk,
    )
    if owner.is_superuser:
        return documents
    permission = {
        "permission__codename": "read_document",
        "permission__content_type__app_label": "knowledge",
        "content_type__app_label": "knowledge",
        "content_type__model": "document",
    }
    # guardian stores object_pk as text; cast it (as guardian does) rather than
    # casting every document id.
    by_user = (
        get_user_obj_perms_model()
        ._default_manager.filter(user_id=owner.pk, **permission)
        .annotate(document_id=Cast("object_pk", BigIntegerField()))
        .values("document_id")
    )
    by_group = (
        get_group_obj_perms_model()
        ._default_manager.filter(group__user=owner.pk, **permission)
        .annotate(document_id=Cast("object_pk", BigIntegerField()))
        .values("document_id")
    )
    return documents.filter(Q(restricted=False) | Q(pk__in=by_user) | Q(pk__in=by_group))


def user_may_read_document(
    user: User | AnonymousUser, document: Document, *, checker: Any = None
) -> bool:
    """The owner's current right to read a document (tenant + ACL); the same rule
    as ``readable_documents`` (tests/knowledge/test_document_acl.py holds them equal).

    ``checker`` is a guardian ObjectPermissionChecker with prefetched perms, so
    callers deciding many documents do it in a bounded number of queries.
    """
    if not user.is_active:
        return False
    tenant_user = getattr(user, "tenant_user", None)
    if tenant_user is None or tenant_user.tenant_id != document.version.knowledge.tenant_id:
        return False
    if not document.restricted:
        return True
    if checker is not None:
        return bool(checker.has_perm("read_document", document))
    return bool(user.has_perm("knowledge.read_document", document))
