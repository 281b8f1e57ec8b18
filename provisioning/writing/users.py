"""Writing staff and tenant users, with their API tokens."""

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from provisioning.errors import ManifestError
from provisioning.shapes import key_path
from provisioning.specs import StaffSpec, UserSpec
from provisioning.writing.base import Writer
from tenancy.models import ApiToken, Tenant, TenantUser, hash_token


class UserWriter(Writer):
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
