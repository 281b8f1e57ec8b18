"""Writing agents and their versions (status moves by ``AgentVersion.transition_refusal``;
a version still pinned is not retired)."""

from agents.models import Agent, AgentVersion
from agents.versions import PinnedVersionError, refuse_retiring_pinned
from knowledge.models import KnowledgeVersion
from provisioning.errors import ManifestError
from provisioning.planning import check_frozen_agent_version
from provisioning.shapes import key_path
from provisioning.specs import AgentSpec, AgentVersionSpec, TenantSpec
from provisioning.writing.base import Writer
from tenancy.models import Tenant


class AgentWriter(Writer):
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

    def check_pinned_versions_not_retired(self, tenant: Tenant, spec: TenantSpec) -> None:
        """Once every pin of the file is applied (a file may retire a version and pin its
        successor): a version still pinned cannot be retired — the admin's rule too."""
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
