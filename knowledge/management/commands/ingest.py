"""python manage.py ingest TENANT/KNOWLEDGE@VERSION FILE… [--publish] — docs/ingest.md."""

from pathlib import Path

import yaml
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.text import slugify

from knowledge.files import UnreadableFile, ingest_file, read_file
from knowledge.models import (
    ImmutableVersionError,
    Knowledge,
    KnowledgeVersion,
    declare_vocabulary,
)
from knowledge.vocabulary import VocabularyError, validate_entries
from tenancy.models import Tenant


def parse_target(target: str) -> tuple[str, str, str]:
    tenant, slash, rest = target.partition("/")
    key, at, version = rest.partition("@")
    if not (slash and at and tenant and key and version):
        raise CommandError(f"the target must be TENANT/KNOWLEDGE@VERSION, got {target!r}")
    return tenant, key, version


def read_vocabulary(name: str) -> dict[str, list[str]]:
    try:
        text = Path(name).read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CommandError(f"{name}: not a readable YAML or JSON file ({type(exc).__name__})")
    try:
        return validate_entries(data).entries()
    except VocabularyError as exc:
        raise CommandError(f"{name}: {exc}")


class Command(BaseCommand):
    help = (
        "Ingest text, Markdown, PDF (with a text layer) or DOCX files as documents of a DRAFT "
        "knowledge version (created if missing); --publish publishes it afterwards."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "target", help="TENANT/KNOWLEDGE@VERSION, e.g. acme/fund-reports@2026-10"
        )
        parser.add_argument("files", nargs="+", help=".txt, .md, .pdf or .docx files")
        parser.add_argument("--key", help="document key (one file only; default: the file name)")
        parser.add_argument(
            "--title", help="document title (one file only; default: from the file)"
        )
        parser.add_argument("--source-version", default="", help="the original file's version")
        parser.add_argument(
            "--restricted",
            action="store_true",
            help="only users granted read_document may read it (grant in the admin)",
        )
        parser.add_argument(
            "--create-knowledge",
            action="store_true",
            help="create the MANAGED knowledge base if it does not exist",
        )
        parser.add_argument("--publish", action="store_true", help="publish the version afterwards")
        parser.add_argument(
            "--vocabulary",
            metavar="FILE",
            help="a YAML or JSON mapping {term: [what the documents print instead]}, stored as "
            "this knowledge's search vocabulary (replacing the one declared before)",
        )

    def handle(self, *args, target, files, key, title, source_version, restricted, **options):
        if len(files) > 1 and (key or title):
            raise CommandError("--key and --title name one document: give one file with them")
        tenant_key, knowledge_key, label = parse_target(target)
        vocabulary = read_vocabulary(options["vocabulary"]) if options.get("vocabulary") else None
        parsed = []
        for name in files:
            try:
                parsed.append((Path(name), read_file(name)))
            except UnreadableFile as exc:
                raise CommandError(str(exc))
        try:
            with transaction.atomic():
                version = self.draft_version(
                    tenant_key, knowledge_key, label, create=options["create_knowledge"]
                )
                if vocabulary is not None:
                    knowledge = version.knowledge
                    if declare_vocabulary(knowledge.tenant, knowledge, vocabulary):
                        self.stdout.write(f"vocabulary of {knowledge}: {len(vocabulary)} term(s)")
                for path, document in parsed:
                    doc_key = key or slugify(path.stem) or path.stem
                    if version.documents.filter(key=doc_key).exists():
                        raise CommandError(
                            f"{version.label} already has a document {doc_key!r}: give another "
                            "--key, or delete that document first (admin)"
                        )
                    self.stdout.write(f"{path.name} ({document.kind}) → {version.label}/{doc_key}")
                    created = ingest_file(
                        version,
                        document,
                        key=doc_key,
                        title=title or "",
                        source_version=source_version,
                        restricted=restricted,
                        progress=self.stdout.write,
                    )
                    self.stdout.write(f"  ingested {created.title!r}: {created.page_count} pages")
                if options["publish"]:
                    version.clean()
                    version.status = KnowledgeVersion.Status.PUBLISHED
                    version.save()
        except ImmutableVersionError as exc:
            raise CommandError(str(exc))
        state = "published" if options["publish"] else "still a DRAFT: publish it when ready"
        self.stdout.write(self.style.SUCCESS(f"{version.label}: {len(parsed)} file(s), {state}"))

    def draft_version(self, tenant_key, knowledge_key, label, *, create) -> KnowledgeVersion:
        tenant = Tenant.objects.filter(key=tenant_key).first()
        if tenant is None:
            raise CommandError(f"no tenant {tenant_key!r}")
        knowledge = Knowledge.objects.filter(tenant=tenant, key=knowledge_key).first()
        if knowledge is None:
            if not create:
                raise CommandError(
                    f"no knowledge {knowledge_key!r} in {tenant_key}: --create-knowledge makes a "
                    "MANAGED one"
                )
            knowledge = Knowledge.objects.create(
                tenant=tenant, key=knowledge_key, type=Knowledge.Type.MANAGED
            )
        if knowledge.type == Knowledge.Type.REMOTE:
            raise CommandError(f"{knowledge_key} is REMOTE: its documents live at its endpoint")
        version, created = KnowledgeVersion.objects.get_or_create(
            knowledge=knowledge, version=label
        )
        if created:
            self.stdout.write(f"+ DRAFT version {version.label}")
        elif version.status != KnowledgeVersion.Status.DRAFT:
            raise CommandError(
                f"{version.label} is {version.status}: its content cannot change; "
                "ingest into a new version"
            )
        return version
