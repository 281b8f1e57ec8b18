"""Create or refresh the console admin: a staff superuser whose login is printed.

Arguments win over the environment (SPARKTIDE_ADMIN_USERNAME, SPARKTIDE_ADMIN_PASSWORD,
SPARKTIDE_ADMIN_EMAIL). Without a password one is generated and set on every run:
the stored one is a hash and cannot be shown again.
"""

import os
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction


class Command(BaseCommand):
    help = "Create or refresh a staff superuser for the console and Django admin; prints the login."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--username", default=os.environ.get("SPARKTIDE_ADMIN_USERNAME", "admin")
        )
        parser.add_argument("--password", default=os.environ.get("SPARKTIDE_ADMIN_PASSWORD", ""))
        parser.add_argument("--email", default=os.environ.get("SPARKTIDE_ADMIN_EMAIL", ""))

    def handle(self, *args, username: str, password: str, email: str, **options) -> None:
        if not username.strip():
            raise CommandError("--username must not be empty")
        generated = not password
        password = password or secrets.token_urlsafe(12)
        User = get_user_model()
        with transaction.atomic():
            user = User.objects.filter(username=username).first()
            created = user is None
            user = user or User(username=username)
            try:
                validate_password(password, user)
            except ValidationError as exc:
                raise CommandError(f"--password: {' '.join(exc.messages)}")
            user.is_staff = user.is_superuser = user.is_active = True
            if email:
                user.email = email
            user.set_password(password)
            user.save()
        shown = password if generated else "(as given)"
        self.stdout.write(
            f"Console admin {'created' if created else 'refreshed'}: "
            f"username={username} password={shown}"
        )
