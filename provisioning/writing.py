"""Writing a manifest: ``apply_manifest`` makes the database match the specs in one
transaction (docs/manifest.md "Apply"). Statuses move only as the models' own
``transition_refusal`` allows; a REMOTE endpoint is checked by the REMOTE client's allow-list."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Model
from django.utils import timezone
from guardian.models import GroupObjectPermission, UserObjectPermission
from guardian.shortcuts import assign_perm

from agents.models import Agent, AgentPin, AgentVersion
from agents.versions import PinnedVersionError, refuse_retiring_pinned
from knowledge.ingest import FactInput, FactNotStated, ingest_document
from knowledge.models import (
    Document,
    Knowledge,
    KnowledgeVersion,
    Lease,
)
from knowledge.remote import RemoteUnavailable, endpoint_url
from provisioning.errors import ManifestError
from provisioning.planning import (
    check_frozen_agent_version,
    check_frozen_version,
    chunk_bounds,
    document_differences,
    remote_differences,
)
from provisioning.shapes import key_path
from provisioning.specs import (
    READ_DOCUMENT,
    VIEW_RUN_HISTORY,
    AgentSpec,
    AgentVersionSpec,
    ApplyResult,
    AppSpec,
    DocumentSpec,
    KnowledgeSpec,
    KnowledgeVersionSpec,
    Manifest,
    StaffSpec,
    TenantSpec,
    UserSpec,
)
from provisioning.vocabulary import apply_vocabulary
from tenancy.models import (
    ApiToken,
    App,
    Membership,
    Tenant,
    TenantUser,
    hash_token,
)


def apply_manifest(manifest: Manifest, *, dry_run: bool = False) -> ApplyResult:
    """Make the database match the manifest, all or nothing.

    With ``dry_run`` every write happens and is counted, then rolled back.
    """
    result = ApplyResult(dry_run=dry_run)
    with transaction.atomic():
        _Applier(result).apply(manifest)
        if dry_run:
            transaction.set_rollback(True)
    if dry_run:
        result.tokens = []  # they were rolled back with everything else
    return result


class _Applier:
    def __init__(self, result: ApplyResult) -> None:
        self.result = result
        self.User = get_user_model()

    def change(self, text: str) -> None:
        self.result.changes.append(text)

    def warn(self, text: str) -> None:
        self.result.warnings.append(text)

    def apply(self, manifest: Manifest) -> None:
        for staff in manifest.staff:
            self.apply_staff(staff)
        for tenant_spec in manifest.tenants:
            self.apply_tenant(tenant_spec)

    # ---- staff

    def apply_staff(self, spec: StaffSpec) -> None:
        user = self.User.objects.filter(username=spec.username).first()
        created = user is None
        if user is None:
            user = self.User(username=spec.username)
        try:
            validate_password(spec.password, user)
        except ValidationError as exc:
            raise ManifestError(key_path(spec.path, "password"), " ".join(exc.messages))
        if spec.superuser and not created and TenantUser.objects.filter(user=user).exists():
            raise ManifestError(
                key_path(spec.path, "username"),
                f"{spec.username!r} is a business user; a superuser passes every object "
                "permission, so it cannot be one (use superuser: false or another username)",
            )
        if created:
            user.is_staff, user.is_superuser = True, spec.superuser
            user.set_password(spec.password)
            user.save()
            self.change(f"+ staff {spec.username}")
            return
        updates = []
        for attr, wanted in (
            ("is_staff", True),
            ("is_superuser", spec.superuser),
            ("is_active", True),
        ):
            if getattr(user, attr) != wanted:
                setattr(user, attr, wanted)
                updates.append(attr)
        if not user.check_password(spec.password):
            user.set_password(spec.password)
            updates.append("password")
        if updates:
            user.save()
            self.change(f"~ staff {spec.username}: {', '.join(updates)}")

    # ---- tenant

    def apply_tenant(self, spec: TenantSpec) -> None:
        tenant = Tenant.objects.filter(key=spec.key).first()
        if tenant is None:
            tenant = Tenant.objects.create(key=spec.key, name=spec.name)
            self.change(f"+ tenant {spec.key}")
        elif tenant.name != spec.name:
            tenant.name = spec.name
            tenant.save(update_fields=["name"])
            self.change(f"~ tenant {spec.key}: name")
        if apply_vocabulary(tenant, None, spec.vocabulary):
            self.change(f"~ tenant {spec.key}: vocabulary")
        for user_spec in spec.users:
            self.apply_user(tenant, user_spec)
        for knowledge_spec in spec.knowledge:
            self.apply_knowledge(tenant, knowledge_spec)
        agents = {a.key: self.apply_agent(tenant, a) for a in spec.agents}
        for agent_spec in spec.agents:
            for version_spec in agent_spec.versions:
                self.apply_agent_version(tenant, agents[agent_spec.key], version_spec)
        for app_spec in spec.apps:
            self.apply_app(tenant, app_spec)
        # Once every pin of the file is applied (a file may retire a version and pin its
        # successor): a version still pinned cannot be retired — the admin's rule too.
        paths = {
            (agent_spec.key, version_spec.version): key_path(version_spec.path, "status")
            for agent_spec in spec.agents
            for version_spec in agent_spec.versions
        }
        for version in (
            AgentVersion.objects.filter(
                agent__tenant=tenant, status=AgentVersion.Status.RETIRED, pins__isnull=False
            )
            .select_related("agent")
            .distinct()
        ):
            try:
                refuse_retiring_pinned(version)
            except PinnedVersionError as exc:
                path = paths.get((version.agent.key, version.version), spec.path)
                raise ManifestError(path, str(exc)) from None

    def tenant_user(self, tenant: Tenant, username: str, path: str) -> User:
        user = self.User.objects.filter(username=username, tenant_user__tenant=tenant).first()
        if user is None:
            raise ManifestError(
                path, f"unknown user {username!r} (not a user of tenant {tenant.key})"
            )
        return user

    def apply_user(self, tenant: Tenant, spec: UserSpec) -> None:
        label = f"{tenant.key}/{spec.username}"
        user = self.User.objects.filter(username=spec.username).first()
        if user is None:
            user = self.User.objects.create_user(username=spec.username, password=None)
            TenantUser.objects.create(tenant=tenant, user=user)
            self.change(f"+ user {label}")
        if user.is_superuser:
            # Guardian grants a superuser every object permission: as a business
            # user it would read every restricted document and every app's history.
            raise ManifestError(
                key_path(spec.path, "username"),
                f"{spec.username!r} is a superuser and cannot be a business user",
            )
        membership = TenantUser.objects.filter(user=user).select_related("tenant").first()
        if membership is None:
            # An existing Django user (e.g. staff) becomes a user of this tenant.
            TenantUser.objects.create(tenant=tenant, user=user)
            self.change(f"+ tenant user {label}")
        elif membership.tenant_id != tenant.pk:
            raise ManifestError(
                key_path(spec.path, "username"),
                f"user {spec.username!r} already belongs to tenant {membership.tenant.key}",
            )
        if spec.token:
            existing = ApiToken.objects.filter(digest=hash_token(spec.token)).first()
            if existing is None:
                ApiToken.issue(user, raw=spec.token)
                self.change(f"+ token {label} (fixed, {spec.token[:10]}…)")
            elif existing.user_id != user.pk:
                raise ManifestError(
                    key_path(spec.path, "token"), "this token belongs to another user"
                )
            elif existing.revoked_at is not None:
                # Revocation is a security decision: the file never undoes it.
                self.warn(
                    f"the fixed token of {label} is revoked and stays revoked; give a new token"
                )
        elif not ApiToken.objects.usable().filter(user=user).exists():
            _, raw = ApiToken.issue(user)
            self.result.tokens.append((label, raw))
            self.change(f"+ token {label} (generated)")

    # ---- knowledge

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

    def sync_object_perm(self, obj: Model, perm: str, wanted: dict[int, User], what: str) -> None:
        """Make the users holding ``perm`` on ``obj`` directly exactly ``wanted``."""
        codename = perm.split(".", 1)[1]
        grants = UserObjectPermission.objects.filter(
            content_type=ContentType.objects.get_for_model(obj),
            object_pk=str(obj.pk),
            permission__codename=codename,
        )
        holders = dict(grants.values_list("user_id", "user__username"))
        for user_id, user in wanted.items():
            if user_id not in holders:
                assign_perm(perm, user, obj)
                self.change(f"+ {what}: {user.get_username()}")
        for user_id, username in holders.items():
            if user_id not in wanted:
                grants.filter(user_id=user_id).delete()
                self.change(f"- {what}: {username}")

    # ---- agents

    def apply_agent(self, tenant: Tenant, spec: AgentSpec) -> Agent:
        agent = Agent.objects.filter(tenant=tenant, key=spec.key).first()
        if agent is None:
            agent = Agent.objects.create(tenant=tenant, key=spec.key, name=spec.name)
            self.change(f"+ agent {tenant.key}/{spec.key}")
        elif agent.name != spec.name:
            agent.name = spec.name
            agent.save(update_fields=["name"])
            self.change(f"~ agent {tenant.key}/{spec.key}: name")
        return agent

    def resolve_knowledge_version(self, tenant: Tenant, label: str, path: str) -> KnowledgeVersion:
        key, _, version = label.partition("@")
        found = (
            KnowledgeVersion.objects.filter(
                knowledge__tenant=tenant, knowledge__key=key, version=version
            )
            .select_related("knowledge")
            .first()
        )
        if found is None:
            raise ManifestError(path, f"no knowledge version {label!r} in tenant {tenant.key}")
        return found

    def apply_agent_version(self, tenant: Tenant, agent: Agent, spec: AgentVersionSpec) -> None:
        label = f"{tenant.key}/{agent.key}@{spec.version}"
        allowed_path = key_path(spec.path, "allowedKnowledge")
        knowledge = [
            self.resolve_knowledge_version(tenant, name, key_path(allowed_path, i))
            for i, name in enumerate(spec.allowed_knowledge)
        ]
        sub_agents = []
        for i, key in enumerate(spec.sub_agents):
            sub_agent = Agent.objects.filter(tenant=tenant, key=key).first()
            if sub_agent is None:
                raise ManifestError(
                    key_path(key_path(spec.path, "subAgents"), i),
                    f"no agent {key!r} in tenant {tenant.key}",
                )
            sub_agents.append(sub_agent)
        version = AgentVersion.objects.filter(agent=agent, version=spec.version).first()
        if version is None or version.status == AgentVersion.Status.DRAFT:
            for i, knowledge_version in enumerate(knowledge):
                if knowledge_version.status != KnowledgeVersion.Status.PUBLISHED:
                    raise ManifestError(
                        key_path(allowed_path, i),
                        f"{spec.allowed_knowledge[i]!r} is {knowledge_version.status}; "
                        "allowedKnowledge may only name PUBLISHED versions",
                    )
            self.write_draft_agent_version(agent, version, spec, knowledge, sub_agents, label)
            version = AgentVersion.objects.get(agent=agent, version=spec.version)
        else:
            check_frozen_agent_version(version, spec)
        if spec.status != version.status:
            refusal = AgentVersion.transition_refusal(version.status, spec.status)
            if refusal is not None:
                raise ManifestError(
                    key_path(spec.path, "status"),
                    f"agent version {label} is {version.status}; it cannot become {spec.status} "
                    f"({refusal})",
                )
            before = version.status
            version.status = spec.status
            version.save()
            self.change(f"~ agent version {label}: {before} → {spec.status}")

    def write_draft_agent_version(
        self,
        agent: Agent,
        version: AgentVersion | None,
        spec: AgentVersionSpec,
        knowledge: list[KnowledgeVersion],
        sub_agents: list[Agent],
        label: str,
    ) -> None:
        fields = {
            "instructions": spec.instructions,
            "model": spec.model,
            "routing": spec.routing,
            "max_steps": spec.max_steps,
        }
        if version is None:
            version = AgentVersion.objects.create(agent=agent, version=spec.version, **fields)
            version.allowed_knowledge.set(knowledge)
            version.sub_agents.set(sub_agents)
            self.change(f"+ agent version {label}")
            return
        changed = [name for name, value in fields.items() if getattr(version, name) != value]
        for name in changed:
            setattr(version, name, fields[name])
        if changed:
            version.save()
        if {k.pk for k in version.allowed_knowledge.all()} != {k.pk for k in knowledge}:
            version.allowed_knowledge.set(knowledge)
            changed.append("allowed_knowledge")
        if {a.pk for a in version.sub_agents.all()} != {a.pk for a in sub_agents}:
            version.sub_agents.set(sub_agents)
            changed.append("sub_agents")
        if changed:
            self.change(f"~ agent version {label}: {', '.join(changed)}")

    # ---- apps

    def apply_app(self, tenant: Tenant, spec: AppSpec) -> None:
        app = App.objects.filter(slug=spec.slug).select_related("tenant").first()
        if app is not None and app.tenant_id != tenant.pk:
            raise ManifestError(
                key_path(spec.path, "slug"), f"app {spec.slug!r} belongs to tenant {app.tenant.key}"
            )
        fields = {"name": spec.name, "status": spec.status, "retention_days": spec.retention_days}
        epochs = {
            "security_policy_epoch": (spec.security_policy_epoch, "securityPolicyEpoch"),
            "knowledge_access_epoch": (spec.knowledge_access_epoch, "knowledgeAccessEpoch"),
        }
        if app is None:
            app = App.objects.create(
                tenant=tenant,
                slug=spec.slug,
                **fields,
                **{name: value for name, (value, _) in epochs.items() if value is not None},
            )
            self.change(f"+ app {spec.slug}")
        else:
            changed = []
            for name, value in fields.items():
                if getattr(app, name) != value:
                    changed.append(f"{name} {getattr(app, name)} → {value}")
                    setattr(app, name, value)
            for name, (value, key) in epochs.items():
                if value is None or value == getattr(app, name):
                    continue
                if value < getattr(app, name):
                    # An epoch that went back would make previews of runs made
                    # under a newer policy valid again.
                    raise ManifestError(
                        key_path(spec.path, key),
                        f"epochs only go up: {spec.slug} is at {getattr(app, name)}, the file says {value}",
                    )
                changed.append(f"{name} {getattr(app, name)} → {value}")
                setattr(app, name, value)
            if changed:
                app.save()
                self.change(f"~ app {spec.slug}: {'; '.join(changed)}")
        self.apply_members(tenant, app, spec)
        self.apply_leases(tenant, app, spec)
        self.apply_pins(tenant, app, spec)

    def apply_members(self, tenant: Tenant, app: App, spec: AppSpec) -> None:
        wanted = {}
        for member in spec.members:
            user = self.tenant_user(tenant, member.username, key_path(member.path, "user"))
            wanted[user.pk] = (user, member.history)
        current = {m.user_id: m for m in app.memberships.select_related("user")}
        for user_id, (user, _) in wanted.items():
            if user_id not in current:
                Membership.objects.create(app=app, user=user)
                self.change(f"+ member {app.slug}: {user.get_username()}")
        for user_id, membership in current.items():
            if user_id not in wanted:
                membership.delete()
                self.change(f"- member {app.slug}: {membership.user.get_username()}")
        self.sync_object_perm(
            app,
            VIEW_RUN_HISTORY,
            {user_id: user for user_id, (user, history) in wanted.items() if history},
            f"history of {app.slug}",
        )

    def apply_leases(self, tenant: Tenant, app: App, spec: AppSpec) -> None:
        now = timezone.now()
        kept = set()
        for lease_spec in spec.leases:
            version = self.resolve_knowledge_version(
                tenant, lease_spec.knowledge, key_path(lease_spec.path, "knowledge")
            )
            kept.add(version.pk)
            label = f"{app.slug} → {lease_spec.knowledge}"
            lease = Lease.objects.filter(app=app, version=version).first()
            revoked_at = now if lease_spec.revoked else None
            if lease is None:
                Lease.objects.create(
                    app=app,
                    version=version,
                    expires_at=lease_spec.expires_at,
                    revoked_at=revoked_at,
                )
                self.change(f"+ lease {label}")
                continue
            changed = []
            if lease.expires_at != lease_spec.expires_at:
                lease.expires_at = lease_spec.expires_at
                changed.append("expiresAt")
            if lease_spec.revoked is True and lease.revoked_at is None:
                lease.revoked_at = now
                changed.append("revoked")
            elif lease_spec.revoked is False and lease.revoked_at is not None:
                lease.revoked_at = None
                changed.append("restored")
            if changed:
                lease.save()
                self.change(f"~ lease {label}: {', '.join(changed)}")
        # A lease the file no longer lists is revoked, not deleted: runs made
        # under it keep their audit trail.
        dropped = Lease.objects.filter(app=app, revoked_at__isnull=True).exclude(version__in=kept)
        for lease in dropped.select_related("version__knowledge"):
            lease.revoked_at = now
            lease.save(update_fields=["revoked_at"])
            self.change(f"- lease {app.slug} → {lease.version.label} (revoked)")

    def apply_pins(self, tenant: Tenant, app: App, spec: AppSpec) -> None:
        kept = set()
        for pin_spec in spec.pins:
            agent = Agent.objects.filter(tenant=tenant, key=pin_spec.agent).first()
            if agent is None:
                raise ManifestError(
                    pin_spec.path, f"no agent {pin_spec.agent!r} in tenant {tenant.key}"
                )
            version = AgentVersion.objects.filter(agent=agent, version=pin_spec.version).first()
            if version is None:
                raise ManifestError(
                    pin_spec.path, f"agent {pin_spec.agent!r} has no version {pin_spec.version!r}"
                )
            if version.status != AgentVersion.Status.PUBLISHED:
                raise ManifestError(
                    pin_spec.path,
                    f"agent version {version} is {version.status}; only a PUBLISHED version can be pinned",
                )
            kept.add(agent.pk)
            pin = AgentPin.objects.filter(app=app, agent=agent).select_related("version").first()
            if pin is None:
                AgentPin.objects.create(app=app, agent=agent, version=version)
                self.change(f"+ pin {app.slug}: {version}")
            elif pin.version_id != version.pk:
                before = pin.version.version
                pin.version = version
                pin.pinned_at = timezone.now()
                pin.save()
                self.change(f"~ pin {app.slug}: {agent.key} {before} → {version.version}")
        for pin in (
            AgentPin.objects.filter(app=app)
            .exclude(agent__in=kept)
            .select_related("version__agent")
        ):
            pin.delete()
            self.change(f"- pin {app.slug}: {pin.version}")


def _delete_document(document: Document) -> None:
    """Delete a DRAFT document and the object permissions guardian keeps beside it."""
    content_type = ContentType.objects.get_for_model(Document)
    for model in (UserObjectPermission, GroupObjectPermission):
        model.objects.filter(content_type=content_type, object_pk=str(document.pk)).delete()
    document.delete()
