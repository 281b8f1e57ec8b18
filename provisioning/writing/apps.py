"""Writing apps: their fields and epochs (which only go up), members and the history
permission, leases (a lease the file drops is revoked, not deleted) and agent pins."""

from django.utils import timezone

from agents.models import Agent, AgentPin, AgentVersion
from knowledge.models import Lease
from provisioning.errors import ManifestError
from provisioning.shapes import key_path
from provisioning.specs import VIEW_RUN_HISTORY, AppSpec
from provisioning.writing.base import Writer
from tenancy.models import App, Membership, Tenant


class AppWriter(Writer):
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
