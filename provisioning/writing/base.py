"""What every writer of a manifest shares: the changes and warnings it reports, and
the lookups of the names a file refers to (a tenant's user, a knowledge version)."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model
from guardian.models import UserObjectPermission
from guardian.shortcuts import assign_perm

from knowledge.models import KnowledgeVersion
from provisioning.errors import ManifestError
from provisioning.specs import ApplyResult
from tenancy.models import Tenant


class Writer:
    """What each kind's writer extends; ``apply_manifest`` writes with one object that is
    all of them (``_Applier``), so they share one result."""

    def __init__(self, result: ApplyResult) -> None:
        self.result = result
        self.User = get_user_model()

    def change(self, text: str) -> None:
        self.result.changes.append(text)

    def warn(self, text: str) -> None:
        self.result.warnings.append(text)

    def tenant_user(self, tenant: Tenant, username: str, path: str) -> User:
        user = self.User.objects.filter(username=username, tenant_user__tenant=tenant).first()
        if user is None:
            raise ManifestError(
                path, f"unknown user {username!r} (not a user of tenant {tenant.key})"
            )
        return user

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
