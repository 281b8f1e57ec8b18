"""python manage.py ingest TENANT/KNOWLEDGE@VERSION FILE… [--publish [--app APP [--agent KEY]]]
— docs/ingest.md.

An operator's tool beside the core (provisioning): it reads files into a knowledge version and,
with --app and --agent, makes an app answer from it in the same step — a lease, and a new agent
version allowing it, pinned (agents/releases.py)."""

from pathlib import Path
from typing import Any

import yaml
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils.text import slugify

from agents.releases import ReleaseRefused, release_with_knowledge
from knowledge.files import UnreadableFile, ingest_file, read_file
from knowledge.models import (
    ImmutableVersionError,
    Knowledge,
    KnowledgeVersion,
    Lease,
    declare_vocabulary,
)
from knowledge.vocabulary import VocabularyError, validate_entries
from tenancy.models import App, Tenant


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

    def add_arguments(self, parser: CommandParser) -> None:
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
        parser.add_argument(
            "--app",
            help="with --publish: give this app of the tenant a lease on the version",
        )
        parser.add_argument(
            "--agent",
            help="with --app: publish a new version of this agent (a copy of the one the app "
            "pins) that also allows the new knowledge version, and pin it in the app",
        )

    def handle(
        self,
        *args: Any,
        target: str,
        files: list[str],
        key: str | None,
        title: str | None,
        source_version: str,
        restricted: bool,
        **options: Any,
    ) -> None:
        if len(files) > 1 and (key or title):
            raise CommandError("--key and --title name one document: give one file with them")
        if options["app"] and not options["publish"]:
            raise CommandError("--app leases a published version: give --publish with it")
        if options["agent"] and not options["app"]:
            raise CommandError("--agent re-pins an agent in an app: give --app with it")
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
                if options["app"]:
                    self.use_in_app(version, options["app"], options["agent"])
        except (ImmutableVersionError, ReleaseRefused) as exc:
            raise CommandError(str(exc))
        state = "published" if options["publish"] else "still a DRAFT: publish it when ready"
        self.stdout.write(self.style.SUCCESS(f"{version.label}: {len(parsed)} file(s), {state}"))

    def use_in_app(self, version: KnowledgeVersion, app_slug: str, agent_key: str | None) -> None:
        app = App.objects.filter(tenant=version.knowledge.tenant, slug=app_slug).first()
        if app is None:
            raise CommandError(f"no app {app_slug!r} in {version.knowledge.tenant.key}")
        lease, _ = Lease.objects.get_or_create(app=app, version=version)
        if lease.revoked_at is not None:
            raise CommandError(
                f"{app.slug}'s lease on {version.label} was revoked: grant it again in the admin"
            )
        self.stdout.write(f"+ lease: {app.slug} → {version.label}")
        if not agent_key:
            self.stdout.write(
                f"  {app.slug} may use {version.label}; an agent version that allows it must "
                "be pinned (--agent does both)"
            )
            return
        before, released = release_with_knowledge(app=app, agent_key=agent_key, version=version)
        self.stdout.write(
            f"+ agent {released} published (a copy of {before} that also allows "
            f"{version.label}); {app.slug} now pins it — roll back by pinning {before} again"
        )
        if released.routing:
            self.stdout.write(
                "  its routing rules are copied as they are: a question a rule matches searches "
                "only the versions that rule names"
            )

    def draft_version(
        self, tenant_key: str, knowledge_key: str, label: str, *, create: bool
    ) -> KnowledgeVersion:
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
