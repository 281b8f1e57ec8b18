"""Writing a manifest: ``apply_manifest`` makes the database match the specs in one
transaction (docs/manifest.md "Apply"). Statuses move only as the models' own
``transition_refusal`` allows; a REMOTE endpoint is checked by the REMOTE client's allow-list.

One writer a kind of resource, applied in this order: ``users`` (staff, then each tenant's
users), ``knowledge``, ``agents``, ``apps``; ``base`` holds what they share."""

from django.db import transaction

from provisioning.specs import ApplyResult, Manifest, TenantSpec
from provisioning.vocabulary import apply_vocabulary
from provisioning.writing.agents import AgentWriter
from provisioning.writing.apps import AppWriter
from provisioning.writing.knowledge import KnowledgeWriter
from provisioning.writing.users import UserWriter
from tenancy.models import Tenant


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


class _Applier(UserWriter, KnowledgeWriter, AgentWriter, AppWriter):
    def apply(self, manifest: Manifest) -> None:
        for staff in manifest.staff:
            self.apply_staff(staff)
        for tenant_spec in manifest.tenants:
            self.apply_tenant(tenant_spec)

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
        # Last: a file may retire a version and pin its successor at once.
        self.check_pinned_versions_not_retired(tenant, spec)
