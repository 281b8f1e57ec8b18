"""Writing knowledge: its versions (status moves by ``KnowledgeVersion.transition_refusal``),
a DRAFT's documents re-ingested as the file changes, and each document's readers."""

from django.contrib.contenttypes.models import ContentType
from guardian.models import GroupObjectPermission, UserObjectPermission

from knowledge.ingest import FactInput, FactNotStated, ingest_document
from knowledge.models import Document, Knowledge, KnowledgeVersion
from knowledge.remote import RemoteUnavailable, endpoint_url
from provisioning.errors import ManifestError
from provisioning.planning import (
    check_frozen_version,
    chunk_bounds,
    document_differences,
    remote_differences,
)
from provisioning.shapes import key_path
from provisioning.specs import READ_DOCUMENT, DocumentSpec, KnowledgeSpec, KnowledgeVersionSpec
from provisioning.vocabulary import apply_vocabulary
from provisioning.writing.base import Writer
from tenancy.models import Tenant


class KnowledgeWriter(Writer):
    def apply_knowledge(self, tenant: Tenant, spec: KnowledgeSpec) -> None:
        label = f"{tenant.key}/{spec.key}"
        knowledge = Knowledge.objects.filter(tenant=tenant, key=spec.key).first()
        if knowledge is None:
            knowledge = Knowledge.objects.create(
                tenant=tenant, key=spec.key, name=spec.name, type=spec.type
            )
            self.change(f"+ knowledge {label} ({spec.type})")
        else:
            if knowledge.type != spec.type:
                raise ManifestError(
                    key_path(spec.path, "type"),
                    f"knowledge {spec.key!r} is {knowledge.type}; its type cannot change "
                    "(declare new knowledge instead)",
                )
            if knowledge.name != spec.name:
                knowledge.name = spec.name
                knowledge.save(update_fields=["name"])
                self.change(f"~ knowledge {label}: name")
        if apply_vocabulary(tenant, knowledge, spec.vocabulary):
            self.change(f"~ knowledge {label}: vocabulary")
        for version_spec in spec.versions:
            self.apply_knowledge_version(tenant, knowledge, version_spec)

    def apply_knowledge_version(
        self, tenant: Tenant, knowledge: Knowledge, spec: KnowledgeVersionSpec
    ) -> None:
        label = f"{tenant.key}/{knowledge.key}@{spec.version}"
        version = KnowledgeVersion.objects.filter(knowledge=knowledge, version=spec.version).first()
        if version is None:
            version = KnowledgeVersion.objects.create(
                knowledge=knowledge,
                version=spec.version,
                endpoint=spec.endpoint,
                secret=spec.secret,
                timeout_seconds=spec.timeout_seconds,
            )
            for document_spec in spec.documents:
                self.ingest(version, document_spec)
            count = len(spec.documents)
            what = f" ({count} document{'s' if count != 1 else ''})" if count else ""
            self.change(f"+ knowledge version {label}{what}")
        elif version.status == KnowledgeVersion.Status.DRAFT:
            self.sync_draft_version(version, spec, label)
        else:
            check_frozen_version(version, spec)
        if knowledge.type == Knowledge.Type.REMOTE:
            self.check_remote_host(spec)
        documents = {d.key: d for d in version.documents.all()}
        for document_spec in spec.documents:
            self.apply_readers(tenant, documents[document_spec.key], document_spec, label)
        if spec.status != version.status:
            refusal = KnowledgeVersion.transition_refusal(version.status, spec.status)
            if refusal is not None:
                raise ManifestError(
                    key_path(spec.path, "status"),
                    f"{label} is {version.status}; it cannot become {spec.status} ({refusal})",
                )
            before = version.status
            version.status = spec.status
            version.save()
            self.change(f"~ knowledge version {label}: {before} → {spec.status}")

    def check_remote_host(self, spec: KnowledgeVersionSpec) -> None:
        """The REMOTE client's own allow-list check, asked before any call is made: a host
        it would refuse is still written (an operator may allow it later), with a warning."""
        try:
            endpoint_url(spec.endpoint, label=f"{spec.path}.endpoint")
        except RemoteUnavailable as refused:
            self.warn(f"{str(refused).rstrip('.')}; calls to it will be refused until it is")

    def ingest(self, version: KnowledgeVersion, spec: DocumentSpec) -> Document:
        try:
            return ingest_document(
                version,
                key=spec.key,
                title=spec.title,
                pages=spec.pages,
                source_version=spec.source_version,
                restricted=spec.readers is not None,
                facts=[
                    FactInput(
                        key=f.key,
                        value=f.value,
                        unit=f.unit,
                        as_of=f.as_of,
                        label=f.label,
                        page=f.page,
                    )
                    for f in spec.facts
                ],
            )
        except FactNotStated as exc:
            raise ManifestError(key_path(spec.facts[exc.index].path, exc.field), str(exc)) from None

    def sync_draft_version(
        self, version: KnowledgeVersion, spec: KnowledgeVersionSpec, label: str
    ) -> None:
        """A DRAFT's content follows the file: changed documents are re-ingested."""
        remote = remote_differences(version, spec)
        if remote:
            version.endpoint, version.secret = spec.endpoint, spec.secret
            version.timeout_seconds = spec.timeout_seconds
            version.save()
            self.change(f"~ knowledge version {label}: {', '.join(remote)}")
        stored = {d.key: d for d in version.documents.all()}
        chunks = chunk_bounds(version)
        wanted = {d.key for d in spec.documents}
        for key, stored_document in stored.items():
            if key not in wanted:
                _delete_document(stored_document)
                self.change(f"- document {label}/{key}")
        for document_spec in spec.documents:
            document = stored.get(document_spec.key)
            if document is None:
                self.ingest(version, document_spec)
                self.change(f"+ document {label}/{document_spec.key}")
                continue
            differences = document_differences(document, document_spec, chunks[document.pk])
            if differences:
                _delete_document(document)
                self.ingest(version, document_spec)
                fields = ", ".join(path.rsplit(".", 1)[-1] for path, _ in differences)
                self.change(f"~ document {label}/{document_spec.key}: {fields}")

    def apply_readers(
        self, tenant: Tenant, document: Document, spec: DocumentSpec, label: str
    ) -> None:
        restricted = spec.readers is not None
        if document.restricted != restricted:
            document.restricted = restricted
            # restricted is the ACL, not content: allowed on a published version.
            document.save(update_fields=["restricted"])
            self.change(
                f"~ document {label}/{document.key}: "
                + ("readers restricted" if restricted else "readable by every tenant user")
            )
        wanted = {
            user.pk: user
            for user in (
                self.tenant_user(tenant, reader.username, reader.path)
                for reader in spec.readers or ()
            )
        }
        self.sync_object_perm(
            document,
            READ_DOCUMENT,
            wanted,
            f"reader of {label}/{document.key}",
        )


def _delete_document(document: Document) -> None:
    """Delete a DRAFT document and the object permissions guardian keeps beside it."""
    content_type = ContentType.objects.get_for_model(Document)
    for model in (UserObjectPermission, GroupObjectPermission):
        model.objects.filter(content_type=content_type, object_pk=str(document.pk)).delete()
    document.delete()
